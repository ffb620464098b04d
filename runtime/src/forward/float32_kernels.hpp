#pragma once
// Internal to the runtime. The forward pass's inner loops in Arithmetic::Float32, a plain
// float32 framework (forward.hpp states the order of every sum): one attention sublayer and
// one MLP over the rows of a word. Nothing is re-associated; what makes them fast is skipping
// exact zeros, replaying sums of bitwise-equal terms (identical_sum.hpp), and the key tree for
// long rows (key_tree.hpp).
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "forward/forward_kernels.hpp"
#include "forward/key_tree.hpp"
#include "forward/prepared_network.hpp"
#include "krc/runtime/forward.hpp"

namespace krc::kernels::f32 {

using FloatRows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The nonzeros of each value row: row j is (index, value)[start[j], start[j + 1]).
struct ValueRows {
  std::vector<int> start{0}, index;
  std::vector<float> value;
};

struct HeadState;

// Maximal runs of consecutive, bitwise-equal key rows. A counter's keys are BOS's and then one
// vector for every other position: two runs, whatever the length. For a query row every key of
// a run has the same score, hence the same softmax weight p, so the run's share of the
// normaliser is a replayed sum of identical terms, and so is its share of a value column whose
// nonzeros in the run are all one value (a column with several values is summed term by term).
// Run boundaries depend on rows <= j only; the per-run statistics are rebuilt per word.
class KeyRuns {
 public:
  static constexpr int kMaxRuns = 64;     // past that, a head's rows go the dense way
  static constexpr int kRowsPerRun = 16;  // runs only when rows >= 16 x runs

  struct Column {
    int count = 0;       // nonzeros so far
    float value = 0.0f;  // the first nonzero
    bool mixed = false;  // some later nonzero differs from it
  };
  struct Run {
    int begin = 0;  // its first row, whose key stands for all
  };

  // Forgets rows >= from (the next word shares rows < from with the last one).
  void keep_rows(int from);
  // Whether query row i takes the run path; takes rows up to i into the runs first.
  bool usable(const HeadState& h, int i, int value_dim);
  int runs() const { return static_cast<int>(runs_.size()); }
  const Run& run(int r) const { return runs_[r]; }
  const Column& column(int r, int c) const { return columns_[r * value_dim_ + c]; }

 private:
  void add(const HeadState& h, int j);
  std::vector<Run> runs_;
  std::vector<Column> columns_;  // [run][value column]
  int rows_ = 0, value_dim_ = 0;
  bool overflow_ = false;  // more than kMaxRuns runs so far
};

// One head's projections in one layer; they outlive a word (the next word reuses the rows of
// the prefix it shares with this one).
struct HeadState {
  FloatRows q;   // [n, query_dim]
  FloatRows kt;  // keys transposed: [query_dim, at least n rounded up to 16]
  ValueRows v;
  KeyRuns runs;
  KeyTree tree;  // for long rows
  TreeUse tree_use;
};

struct LayerState {
  std::vector<HeadState> heads;
};

struct Scratch {
  std::vector<float> score, weight, acc, head_out, delta, key, value;
  std::vector<int> kept;
  std::vector<double> query;  // the row's query in double, for the key tree
  long long run_rows = 0, dense_rows = 0, tree_rows = 0;  // query rows by path
};

// Rows [from, n) of x get the sum over heads of (attention-weighted sum of v_j, j <= i) W_O.
void apply_attention(const PreparedLayer& layer, float scale, const ForwardOptions& options,
                     Activations<float>& x, int from, int n, LayerState& state, Scratch& scratch);

struct MlpScratch {
  std::vector<float> out;
  // The candidate units of a row as a bitmap (all zero between rows) and its nonzero words,
  // which give the candidates in ascending order without sorting them one by one.
  std::vector<std::uint64_t> bits;
  std::vector<int> words, small_inputs;
  long long clamp_rows = 0;  // rows the integer clamp-pair form served (integer_clamp_mlp.hpp)
  std::vector<double> rest_input;  // per rest set of the sign-pattern groups
  long long pattern_lookups = 0;   // groups a row's sign pattern decided (sign_pattern_units.hpp)
};

// x[i] += (W2 ReLU(W1 x[i] + b1)) + b2 for every row i in [from, n), summing the hidden units
// that can be nonzero in ascending order.
void apply_mlp(const PreparedMlp& mlp, Activations<float>& x, int from, int n, MlpScratch& scratch);

// logits[i] = x[i] unembedding, summed over residual dims in ascending order.
void unembed(const ScatterRows& unembedding, const Activations<float>& x, int from, int n,
             DoubleRows& logits);

}  // namespace krc::kernels::f32
