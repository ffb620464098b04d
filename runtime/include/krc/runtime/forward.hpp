#pragma once
// The forward pass (semantics in network.hpp), fast on compiled networks: sparse weights,
// sparse activations, mostly one-hot values, attention weights that are almost all zero.
//
// Five arithmetics (README "Arithmetic"):
//
// Arithmetic::Float32 is a plain float32 framework (PyTorch or numpy on a BLAS): every product
// is rounded to float32 and every sum is a float32 running sum in a fixed order, sequential
// over the summed index (a conservative model: BLAS kernels sum in blocks and fuse with FMA,
// which usually rounds less). Projections sum over input dims in ascending order; a score is
// fl(scale * (q . k)) with the dot over head dims in order; softmax subtracts the row max,
// takes expf(fl(s - max)), sums the weights over keys in ascending order, divides each by the
// sum and sums fl(p_j v_j) over keys in order; a head's output sums over its value dims in
// order, the heads' outputs are summed in head order and added to x once; an MLP sums its
// hidden units in ascending order, then adds the bias, then the residual. Terms that are
// exact zeros are skipped (fl(s - max) <= -104: expf underflows to 0), nothing is
// re-associated: sums of bitwise-equal terms are replayed exactly (identical_sum.hpp).
//
// Arithmetic::Float64Accumulate: activations (the residual stream, q, k, v, attention-weighted
// value sums, MLP hidden units, logits) are stored in float32; every accumulation that produces
// one runs in float64 and is rounded to float32 once. Softmax terms with s_j - max < -104 are
// skipped. Two sums are re-associated, not taken term by term: softmax over groups of equal
// keys (key_groups.cpp) and MLP units reading one linear form of the row
// (shared_input_units.hpp), whose hidden values are therefore not stored one by one.
//
// Arithmetic::Float64: everything in double (terms below -746 are skipped, exact zeros in
// float64), with the re-associations of Float64Accumulate.
//
// Arithmetic::BFloat16 and Arithmetic::Float16: a model cast to that format in a GPU framework:
// weights and every stored tensor rounded to the format, each product summed in float32 and
// rounded once, softmax in float32 (narrow_forward.hpp; README "bf16 and fp16"). Dense
// attention, so slower than the others on long words.
//
// AttentionKind::Hard: Select heads take the argmax of the scores (ties to the latest
// position); Average heads have no argmax form and are evaluated as softmax.
// AttentionKind::Hardmax: every head puts weight 1/|M| on the positions M of its maximal
// score: the softmax formula with only the terms at the maximum kept (each weighs exp(0) = 1).
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

enum class Arithmetic {
  Float32,            // a plain float32 framework: float32 products and running sums
  Float64Accumulate,  // float32 activations, each sum in float64 rounded once
  Float64,            // everything in double
  BFloat16,           // a model cast to bfloat16 on a GPU framework (narrow_forward.hpp)
  Float16,            // a model cast to float16 (IEEE binary16) on a GPU framework
};
// The arithmetic of ForwardOptions, `krc verify` and `krc run` unless told otherwise: what a
// plain float32 framework computes, because that is where users run the weights. Every
// construction is exact in it up to max-len 65536 (README "In a plain float32 framework").
inline constexpr Arithmetic kDefaultArithmetic = Arithmetic::Float32;

// "float32", "float64-accumulate", "float64", "bf16", "fp16"
const char* to_string(Arithmetic arithmetic);
Arithmetic arithmetic_from_string(const std::string& s);  // throws std::invalid_argument
std::vector<std::string> arithmetic_names();  // every name, in enum order (the CLI's choices)
// What the arithmetic means, in a few words, for reports.
const char* describe(Arithmetic arithmetic);

struct ForwardOptions {
  AttentionKind attention = AttentionKind::Softmax;
  Arithmetic arithmetic = kDefaultArithmetic;
  int threads = 0;  // words run in parallel; 0 = one per hardware thread
  // Query rows from this one on find their nonzero softmax terms through bounds on blocks of
  // keys (key_tree.hpp) instead of scoring every causal key (average heads that keep most keys
  // go back to scoring them, TreeUse). The result is bitwise the same for any value; it only
  // decides speed (tests and benchmarks vary it). 256: at 1,024 letters the non-solvable kr
  // networks' scan levels run 1.5x faster than from 1,024 (alternating_5, `krc bench forward`),
  // and no zoo network measured slower.
  int key_tree_from_row = 256;
};

struct PreparedNetwork;  // sparse copies of the weights laid out for the kernels
namespace narrow {
class Forward;  // the BFloat16/Float16 pass
}

// Prepares the network once (transposed sparse copies), then runs any number of words.
// Thread-safe: run() may be called concurrently. The network must outlive the ForwardPass.
class ForwardPass {
 public:
  explicit ForwardPass(const Network& network, ForwardOptions options = {});
  ~ForwardPass();
  ForwardPass(const ForwardPass&) = delete;
  ForwardPass& operator=(const ForwardPass&) = delete;

  const Network& network() const { return network_; }
  const ForwardOptions& options() const { return options_; }
  const PreparedNetwork& prepared() const { return *prepared_; }
  // What the prepared copies hold: the smaller of PreparedNetwork::bytes() and the model's
  // upper bound that check_prepare_memory checked before building them; run's memory checks
  // count it.
  std::uint64_t prepared_bytes() const { return prepared_bytes_; }
  // The threads run(words) uses from now on (the verifier picks them once the prepared copies'
  // size is known).
  void set_threads(int threads) { options_.threads = threads; }

  // Logits [word.size() + 1, states] for every prefix (row 0: BOS only). Except in Float64
  // arithmetic the values are float32 numbers held in doubles. Throws std::invalid_argument for a
  // word longer than max_len or a letter outside the vocabulary.
  Eigen::MatrixXd run(const std::vector<LetterId>& word) const;
  // Many words, in parallel (options.threads).
  std::vector<Eigen::MatrixXd> run(const std::vector<std::vector<LetterId>>& words) const;

 private:
  const Network& network_;
  ForwardOptions options_;
  std::unique_ptr<PreparedNetwork> prepared_;
  std::uint64_t prepared_bytes_ = 0;
  std::unique_ptr<narrow::Forward> narrow_;  // in BFloat16 and Float16 only
};

// Per word [len + 1, states].
std::vector<Eigen::MatrixXf> forward_logits(const Network& network,
                                            const std::vector<std::vector<LetterId>>& words,
                                            const ForwardOptions& options = {});

// The argmax state after every prefix (ties: the lowest state index).
std::vector<std::vector<StateId>> predict_states(const Network& network,
                                                 const std::vector<std::vector<LetterId>>& words,
                                                 const ForwardOptions& options = {});

}  // namespace krc
