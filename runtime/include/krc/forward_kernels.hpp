#pragma once
// The forward pass's inner loops (forward.hpp states the arithmetic they implement): one
// attention sublayer over a whole word, one MLP over a whole word. Internal to the runtime.
#include <Eigen/Dense>
#include <vector>

#include "krc/forward.hpp"
#include "krc/prepared_network.hpp"

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

// One head's projections in one layer. They outlive a word: the next word reuses the rows
// of the prefix it shares with this one.
struct HeadState {
  DoubleRows q;   // [n, query_dim], rounded as stored
  DoubleRows kt;  // keys transposed: [query_dim, at least n rounded up to 16]
  SparseRows v;   // value rows, mostly one-hot
};

struct LayerAttentionState {
  std::vector<HeadState> heads;
};

struct AttentionScratch {
  DoubleRows scores;   // one block of query rows against the causal keys
  double row_max[64];  // the largest causal score of each row of the block
  DoubleRows block;    // x + the heads' outputs for one block of rows
  std::vector<double> acc, key, dense_v;
  Eigen::ArrayXd diff;  // softmax exponents, then weights; aligned (see mix_values)
  std::vector<int> kept;
};

// Rows [from, n) of x get the sum over heads of (attention-weighted sum of v_j, j <= i) W_O.
// `state` must hold this layer's k and v of rows < from, as left by the previous call for a
// word with the same first `from` positions.
template <typename Act>
void apply_attention(const PreparedLayer& layer, double scale, const ForwardOptions& options,
                     Activations<Act>& x, int from, int n, LayerAttentionState& state, AttentionScratch& scratch);

struct MlpScratch {
  std::vector<double> acc, out;  // acc and touched_mark are all zero between rows
  std::vector<char> touched_mark;
  std::vector<int> touched, small_inputs;
};

// x[i] += W2 ReLU(W1 x[i] + b1) + b2 for every row i in [from, n), touching only the hidden
// units that can be nonzero.
template <typename Act>
void apply_mlp(const PreparedMlp& mlp, Activations<Act>& x, int from, int n, MlpScratch& scratch);

}  // namespace krc::kernels
