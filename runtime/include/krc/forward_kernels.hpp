#pragma once
// The forward pass's inner loops (forward.hpp states the arithmetic they implement): one
// attention head over a whole word, one MLP over a whole word. Internal to the runtime.
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

// The nonzeros of each row of a matrix (compiled activations are mostly zero).
struct SparseRows {
  std::vector<int> start{0}, index;
  std::vector<double> value;

  void clear() {
    start.assign(1, 0);
    index.clear();
    value.clear();
  }
  template <typename T>
  void push_row(const T* row, int width) {
    for (int c = 0; c < width; ++c)
      if (row[c] != 0) {
        index.push_back(c);
        value.push_back(static_cast<double>(row[c]));
      }
    start.push_back(static_cast<int>(index.size()));
  }
  int rows() const { return static_cast<int>(start.size()) - 1; }
};

template <typename Act>
void sparse_rows_of(const Activations<Act>& x, int n, SparseRows& out) {
  out.clear();
  for (int i = 0; i < n; ++i) out.push_row(x.row(i).data(), static_cast<int>(x.cols()));
}

struct AttentionScratch {
  DoubleRows q, k, scores, dense;
  SparseRows v;
  std::vector<double> acc, diff;
  std::vector<int> kept;
};

// update[i] += (attention-weighted sum of v_j, j <= i) W_O for every position i < n.
void add_attention_head(const PreparedHead& head, const SparseRows& x, double scale,
                        const ForwardOptions& options, AttentionScratch& scratch, DoubleRows& update);

struct MlpScratch {
  std::vector<double> acc, out;
  std::vector<char> touched_mark;
  std::vector<int> touched;
};

// x[i] += W2 ReLU(W1 x[i] + b1) + b2 for every row i < n, touching only the hidden units
// that can be nonzero.
template <typename Act>
void apply_mlp(const PreparedMlp& mlp, Activations<Act>& x, int n, MlpScratch& scratch);

}  // namespace krc::kernels
