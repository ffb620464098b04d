#pragma once
// A krc network as a stock Hugging Face GPT2LMHeadModel checkpoint whose LayerNorms are the
// identity bit for bit in PyTorch's float32 CPU kernel. One export for every caller: `krc export
// --format gpt2` and `krc.Network.to_hf` both write the files this returns. The layout and why it
// is exact: compiler/README.md §7; the files: tools/README.md "A stock GPT-2 checkpoint".
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "krc/runtime/network.hpp"

namespace krc {

struct Gpt2Options {
  long long max_bytes = 2LL << 30;  // LimitError past this many bytes of tensors
  // Export a network whose exactness cannot be proved (gpt2_exactness), instead of refusing.
  bool allow_inexact = false;
};

// The GPT-2 shape of a network: krc's d coordinates, a constant 1 at coordinate d, and their
// negation from `half` on, padded to a power of two.
struct Gpt2Shape {
  long long d = 0, half = 0, n_embd = 0, n_head = 1, head_dim = 0, inner = 1;
  long long letters = 0, states = 0;  // vocabulary: <bos>, the letters, then the states
  int norm_exponent = 30;             // k: LayerNorm epsilon 4^k, gamma 2^k (the proof's)
  long long vocab() const { return 1 + letters + states; }
};

// LayerNorm's epsilon is 4^k and gamma 2^k: k = 30 by default, larger (up to 63) where a
// network's residual may be too large for 30 (compiler/README.md §7). fp16 holds gamma only up
// to 65,504, so a network certified in fp16 is first tried with k from 15 down: then its
// checkpoint cast to float16 computes the same identity (epsilon is a Python float in the
// config, never cast).
inline constexpr int kDefaultNormExponent = 30;
inline constexpr int kLargestNormExponent = 63;
inline constexpr int kLargestFp16NormExponent = 15;

// The formats a checkpoint keeps (compiler/README.md §7, "In bf16 and fp16"): float32 when
// every LayerNorm is proved the identity; bfloat16 and float16 when, besides, the network is
// certified in that format at its max-len (its compiler metadata, `precision.exact_in`) and
// gamma 2^k is a finite number of the format. `why` says what is missing, "" when kept.
struct Gpt2Format {
  std::string name;        // "float32", "bfloat16", "float16": torch's dtype names
  bool certified = false;  // the network is (krc verify --arithmetic), at its max-len
  bool kept = false;       // and so is the checkpoint
  std::string why;
};

// Whether every LayerNorm of the export is provably the identity on every value its next
// sublayer reads, for every word up to max_len (compiler/README.md §7, "When it is exact").
struct Gpt2Exactness {
  bool exact = true;
  int norm_exponent = kDefaultNormExponent;  // the k the export writes
  std::string reason;  // why not, naming the layer and the residual coordinate; "" when exact
  double largest = 0;  // a bound on every residual value's magnitude
};

// Derived from the weights alone (intervals and binary grids of every residual coordinate),
// for the export's width n_embd (Gpt2Shape), with k searched in [lowest, highest] (the
// smallest that proves it; k = lowest with its reason when none does).
Gpt2Exactness gpt2_exactness(const Network& n, long long n_embd, int lowest = kDefaultNormExponent,
                             int highest = kLargestNormExponent);

struct Gpt2Checkpoint {
  Gpt2Shape shape;
  Gpt2Exactness exactness;
  std::vector<Gpt2Format> formats;  // float32, bfloat16, float16, in that order
  nlohmann::json config;
  long long tensor_bytes = 0;
  // {file name, contents} in the order to write them: config.json last, so that a directory
  // from_pretrained can open holds every file.
  std::vector<std::pair<std::string, std::string>> files;
};

// `source` names the network in errors. Throws InputError (exit 2) for a network GPT-2 cannot
// hold exactly: hard attention, a scale that is not a power of two, or, unless allow_inexact,
// one gpt2_exactness cannot prove; LimitError past max_bytes.
Gpt2Checkpoint gpt2_checkpoint(const Network& n, const std::string& source,
                               const Gpt2Options& options);

// {name: {"kept", "network_certified", "why"}}: krc_gpt2.json's "formats", and `--json`'s.
nlohmann::json gpt2_formats_json(const std::vector<Gpt2Format>& formats);

}  // namespace krc
