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

struct HeadScratch {
  DoubleRows q;   // [n, query_dim], rounded as stored
  DoubleRows kt;  // keys transposed: [query_dim, n rounded up to 16], zero padded
  SparseRows v;     // value rows, mostly one-hot
  std::vector<double> dense_v;
};

struct AttentionScratch {
  std::vector<HeadScratch> heads;
  DoubleRows scores;  // one block of query rows against the causal keys
  double row_max[64];  // the largest causal score of each row of the block
  DoubleRows block;   // x + the heads' outputs for one block of rows
  std::vector<double> acc, diff;
  std::vector<int> kept;
};

// x[i] += sum over heads of (attention-weighted sum of v_j, j <= i) W_O, for every i < n.
template <typename Act>
void apply_attention(const PreparedLayer& layer, double scale, const ForwardOptions& options,
                     Activations<Act>& x, int n, AttentionScratch& scratch);

struct MlpScratch {
  std::vector<double> acc, out;
  std::vector<char> touched_mark;
  std::vector<int> touched, small_inputs;
};

// x[i] += W2 ReLU(W1 x[i] + b1) + b2 for every row i < n, touching only the hidden units
// that can be nonzero.
template <typename Act>
void apply_mlp(const PreparedMlp& mlp, Activations<Act>& x, int n, MlpScratch& scratch);

}  // namespace krc::kernels
