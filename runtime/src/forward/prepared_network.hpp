#pragma once
// A Network's weights laid out for the forward pass's kernels: every matrix is read as
// "input coordinate r contributes value * row r", so each one is stored as compressed rows
// to scatter (for MLPs the transposes: input dim -> hidden units, hidden unit -> outputs).
// Values are the float32 weights themselves, 8 bytes an entry with the column where doubles took
// 12 (a 657-state network in bf16 holds 3 entries of its 103 M weights: 1.2 GB less); the
// float64-accumulate and float64 kernels multiply them by doubles, so every product is the one
// a double copy gave.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "forward/held_bytes.hpp"
#include "forward/integer_clamp_mlp.hpp"
#include "forward/shared_input_units.hpp"
#include "forward/sign_pattern_units.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

struct ScatterRows {
  int rows = 0, cols = 0;
  std::vector<int> start;  // rows + 1 offsets into column/value
  std::vector<int> column;
  std::vector<float> value;

  static ScatterRows rows_of(const SparseMatrix& m);     // row r of m
  static ScatterRows columns_of(const SparseMatrix& m);  // column r of m (row r of m^T)
  std::uint64_t bytes() const;  // what it holds on the heap (held_bytes.hpp)
  int begin(int r) const { return start[r]; }
  int end(int r) const { return start[r + 1]; }
};

// A set of residual dims, stored as runs of consecutive dims (layouts group them in
// blocks), so that loops over it are plain contiguous loops.
struct DimSet {
  std::vector<std::pair<int, int>> runs;  // [begin, end)

  static DimSet of(const std::vector<char>& member);
  std::uint64_t bytes() const { return held_bytes(runs); }
  template <typename F>
  void for_each(F f) const {
    for (const auto& [begin, end] : runs)
      for (int c = begin; c < end; ++c) f(c);
  }
};

struct PreparedHead {
  HeadKind kind = HeadKind::Select;
  int query_dim = 0, value_dim = 0;
  ScatterRows query, key, value;  // input dim -> head dims
  ScatterRows output;             // value dim -> residual dims
  DimSet reads;                   // the input dims with a weight in query, key or value
};

struct PreparedMlp {
  int hidden = 0;
  ScatterRows in_by_input;  // input dim -> (hidden unit, weight); shared-input units left out
  ScatterRows in_by_unit;   // hidden unit -> (input dim, weight)
  ScatterRows out_by_unit;  // hidden unit -> (residual dim, weight)
  std::vector<double> in_bias, out_bias;
  std::vector<double> largest_in_weight;  // per unit, max |weight|
  // Units that are active even when no input touches them (ReLU(bias) > 0).
  std::vector<int> positive_bias_units;
  // The other units with some weight, by how much input they need to become active:
  // -bias / max|weight|. Inputs of total size L can only activate the units below L.
  std::vector<std::pair<double, int>> units_by_threshold;
  // Inputs below small_input in magnitude are "small" (see prepare_mlp).
  double small_input = 0, low_threshold = 0;
  // Per input dim, the units it feeds whose threshold is below low_threshold: the only units
  // that small inputs (of total size below low_threshold / 2) can activate.
  ScatterRows low_threshold_by_input;
  DimSet reads;   // input dims with a weight to some unit outside `shared_input`
  DimSet writes;  // residual dims with an output weight or an output bias
  // Units that read one linear form of the row (see shared_input_units.hpp), in groups of at
  // least kMinShared; they are in none of the structures above, which serve the other units.
  std::vector<SharedInputUnits> shared_input;
  static constexpr std::size_t kMinShared = 8;  // smaller groups go the ordinary way
  // Units that read one set of inputs with one weight magnitude, each with a sign pattern of
  // its own (sign_pattern_units.hpp), in groups of at least the min_sign_pattern prepare_mlp
  // was given; like shared_input, in none of the structures above but in_by_unit and
  // out_by_unit, from which they are evaluated where their group names them candidates.
  std::vector<SignPatternUnits> sign_patterns;
  std::vector<DimSet> rest_sets;  // the groups' other inputs R; groups that read the same share one
  static constexpr std::size_t kMinSignPattern = 32;
  // The integer clamp-pair form (integer_clamp_mlp.hpp), when the MLP has it: the Float32
  // kernel's fast path for rows of integers.
  std::optional<IntegerClampMlp> integer_clamps;
  std::uint64_t bytes() const;  // what it holds on the heap (held_bytes.hpp)
};

struct PreparedLayer {
  std::vector<PreparedHead> heads;
  DimSet attention_writes;  // residual dims some head's output writes
  std::optional<PreparedMlp> mlp;
};

PreparedHead prepare_head(const AttentionHead& head);
// small_input: far below any designed value (counts 1/max_len are >= 1e-7 up to max_len
// 10^7), far above softmax leakage (e^-20 and less). Any values give the same results; the
// two only decide how fast.
// min_sign_pattern: the smallest group of sign-pattern units (SIZE_MAX: none; the tests compare).
PreparedMlp prepare_mlp(const Mlp& mlp, double small_input = 1e-7, double low_threshold = 1e-2,
                        std::size_t min_sign_pattern = PreparedMlp::kMinSignPattern);

// f(unit) for every unit of mlp's sign-pattern groups that can be positive on `row` (each
// group's lookup or, where its bound does not decide, all of its units); `rest_input` is
// scratch. Returns how many groups the lookup decided.
template <typename Act, typename F>
long long each_sign_pattern_candidate(const PreparedMlp& mlp, const Act* row,
                                      std::vector<double>& rest_input, F f) {
  if (mlp.sign_patterns.empty()) return 0;
  rest_input.assign(mlp.rest_sets.size(), 0.0);
  for (std::size_t k = 0; k < mlp.rest_sets.size(); ++k) {
    double largest = 0.0;
    mlp.rest_sets[k].for_each([&](int c) {
      const double a = std::abs(static_cast<double>(row[c]));
      if (!(a <= largest))
        largest = std::isnan(a) ? std::numeric_limits<double>::infinity() : std::max(largest, a);
    });
    rest_input[k] = largest;
  }
  long long decided = 0;
  for (const SignPatternUnits& group : mlp.sign_patterns) {
    const int rest = group.bounds().rest_set;
    decided += group.each_possibly_active(row, rest < 0 ? 0.0 : rest_input[rest], f);
  }
  return decided;
}

struct PreparedNetwork {
  explicit PreparedNetwork(const Network& network);
  int d_model = 0;
  double scale = 1.0;
  std::vector<PreparedLayer> layers;
  ScatterRows unembedding;  // residual dim -> (state, weight)
  // What the prepared copies hold on the heap, counted once they are built: the verifier's
  // memory checks use it in place of network_memory.hpp's upper bound, which for a 1,000-state
  // scan network was 8.75 GiB against 2.57 GiB counted.
  std::uint64_t bytes() const;
};

}  // namespace krc
