#pragma once
// The forward pass's inner loops (forward.hpp states the arithmetic they implement): one
// attention sublayer over a whole word, one MLP over a whole word. Internal to the runtime.
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "forward/key_tree.hpp"
#include "forward/prepared_network.hpp"
#include "krc/runtime/forward.hpp"

namespace krc::kernels {

template <typename Act>
using Activations = Eigen::Matrix<Act, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using DoubleRows = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The rounding of a stored activation: float32 or none.
inline double stored(double v, bool float32) {
  return float32 ? static_cast<double>(static_cast<float>(v)) : v;
}

// The nonzeros of each row of a matrix (compiled value rows are mostly one-hot): row i is
// (index, value)[start[i], start[i + 1]).
struct SparseRows {
  std::vector<int> start{0}, index;
  std::vector<double> value;

  void clear() {
    start.assign(1, 0);
    index.clear();
    value.clear();
  }
};

struct HeadState;
struct AttentionScratch;

// The key rows of a word grouped by bitwise equality (key_groups.cpp). A counter's keys take
// two values, BOS's and everyone else's; a query row's scores then take two values too, and
// its softmax over t + 1 positions is a sum over two groups: exp(s_g - m) times the group's
// member count and value sum so far. Rows whose keys so far form few groups take that path.
// Group ids are a function of the keys of rows <= j, so they survive into the next word for
// the prefix it shares; the sums are rebuilt per word, in row order, so that a row's result
// never depends on the previous word.
class KeyGroups {
 public:
  static constexpr int kMaxGroups = 64;     // past that, a head's rows go the dense way
  static constexpr int kRowsPerGroup = 16;  // grouped only when rows >= 16 x groups

  // Forgets rows >= from (the next word shares rows < from with the last one).
  void keep_rows(int from);
  // Whether row i takes the grouped path; assigns rows up to i to groups first.
  bool grouped(const HeadState& h, int i);
  // acc = the head's attention-weighted value sum for query row i (which must be grouped).
  void mix(const HeadState& h, int i, int value_dim, double scale, bool argmax, double threshold,
           AttentionScratch& s);

 private:
  void assign(const HeadState& h, int j);
  void sum_through(const HeadState& h, int i, int value_dim);

  std::vector<int> group_of_;      // per assigned row: its group, -1 from the overflow on
  std::vector<int> groups_after_;  // per assigned row: groups among rows <= it
  std::vector<std::uint64_t> hash_;
  std::vector<int> first_;  // per group: its first row, whose key column stands for it
  int overflow_row_ = -1;   // the row that would have made kMaxGroups + 1 groups, or -1
  // Per group, over rows [0, summed_): members, latest member, sum of value rows.
  int summed_ = 0;
  std::vector<double> count_, value_sum_;
  std::vector<int> last_;
};

// One head's projections in one layer. They outlive a word: the next word reuses the rows
// of the prefix it shares with this one.
struct HeadState {
  DoubleRows q;   // [n, query_dim], rounded as stored
  DoubleRows kt;  // keys transposed: [query_dim, at least n rounded up to 16]
  SparseRows v;   // value rows, mostly one-hot
  KeyGroups groups;
  KeyTree tree;  // bounds on the keys, for long rows
  TreeUse tree_use;
};

struct LayerAttentionState {
  std::vector<HeadState> heads;
};

struct AttentionScratch {
  DoubleRows scores;   // one block of query rows against the causal keys
  double row_max[64];  // the largest causal score of each row of the block
  DoubleRows block;    // x + the heads' outputs for one block of rows
  std::vector<double> acc, key, dense_v, group_score;
  Eigen::ArrayXd diff;  // softmax exponents, then weights; aligned (see mix_values)
  std::vector<int> kept;
  char dense_row[64];  // per row of the block: not grouped
  // Query rows by path, for tests and benchmarks.
  long long grouped_rows = 0, dense_rows = 0, tree_rows = 0;
};

// diff[0, count) = exp(diff[0, count)). Vectorised over whole packets from an aligned start:
// Eigen computes unaligned heads and tails with scalar code, whose last bit may differ, which
// would make a result depend on where the buffer happens to lie. diff has room for count + 8.
inline void exp_in_place(Eigen::ArrayXd& diff, int count) {
  const int padded = (count + 7) / 8 * 8;
  diff.segment(count, padded - count).setZero();
  diff.head(padded) = diff.head(padded).exp();
}

// Rows [from, n) of x get the sum over heads of (attention-weighted sum of v_j, j <= i) W_O.
// `state` must hold this layer's k and v of rows < from, as left by the previous call for a
// word with the same first `from` positions.
template <typename Act>
void apply_attention(const PreparedLayer& layer, double scale, const ForwardOptions& options,
                     Activations<Act>& x, int from, int n, LayerAttentionState& state,
                     AttentionScratch& scratch);

struct MlpScratch {
  std::vector<double> acc, out;  // acc and touched_mark are all zero between rows
  std::vector<char> touched_mark;
  std::vector<int> touched, small_inputs;
  std::vector<double> rest_input;  // per rest set of the sign-pattern groups
  long long pattern_lookups = 0;   // groups a row's sign pattern decided (sign_pattern_units.hpp)
};

// x[i] += W2 ReLU(W1 x[i] + b1) + b2 for every row i in [from, n), touching only the hidden
// units that can be nonzero.
template <typename Act>
void apply_mlp(const PreparedMlp& mlp, Activations<Act>& x, int from, int n, MlpScratch& scratch);

}  // namespace krc::kernels
