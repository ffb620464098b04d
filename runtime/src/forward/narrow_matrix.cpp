// narrow::Matrix and the float32 running sums of narrow_forward.hpp's products.
#include <algorithm>
#include <cmath>
#include <limits>

#include "forward/narrow_forward.hpp"

namespace krc::narrow {

Matrix Matrix::of(const SparseMatrix& m, bool transpose, Rounding round) {
  Matrix w;
  w.rows = static_cast<int>(transpose ? m.cols() : m.rows());
  w.cols = static_cast<int>(transpose ? m.rows() : m.cols());
  // (row, column, rounded value) of every entry that stays nonzero, by row.
  std::vector<std::vector<std::pair<int, float>>> by_row(w.rows);
  for (int outer = 0; outer < m.outerSize(); ++outer)
    for (SparseMatrix::InnerIterator it(m, outer); it; ++it) {
      const float v = round(it.value());
      if (v == 0.0f) continue;  // x * 0 is an exact zero term unless x is not finite (see below)
      const int r = static_cast<int>(transpose ? it.col() : it.row());
      by_row[r].emplace_back(static_cast<int>(transpose ? it.row() : it.col()), v);
    }
  w.start.assign(w.rows + 1, 0);
  w.nonfinite_row.assign(w.rows, 0);
  for (int r = 0; r < w.rows; ++r) {
    std::sort(by_row[r].begin(), by_row[r].end());
    for (const auto& [c, v] : by_row[r]) {
      w.column.push_back(c);
      w.value.push_back(v);
      if (!std::isfinite(v)) w.nonfinite_row[r] = 1;
    }
    w.start[r + 1] = static_cast<int>(w.column.size());
    w.any_nonfinite = w.any_nonfinite || w.nonfinite_row[r];
  }
  return w;
}

void accumulate(const Matrix& w, const float* x, float* acc) {
  std::vector<int> poisoned;  // inputs that are infinite or NaN
  for (int r = 0; r < w.rows; ++r) {
    const float xr = x[r];
    if (!std::isfinite(xr))
      poisoned.push_back(r);
    else if (xr == 0.0f && !w.nonfinite_row[r])
      continue;  // every product is +-0: the running sum (never -0, it starts at +0) keeps
    for (int e = w.start[r]; e < w.start[r + 1]; ++e) acc[w.column[e]] += xr * w.value[e];
  }
  // A dense product multiplies a non-finite x_r by every zero weight of its row too: NaN.
  std::vector<char> has_weight;
  for (int r : poisoned) {
    has_weight.assign(w.cols, 0);
    for (int e = w.start[r]; e < w.start[r + 1]; ++e) has_weight[w.column[e]] = 1;
    for (int c = 0; c < w.cols; ++c)
      if (!has_weight[c]) acc[c] = std::numeric_limits<float>::quiet_NaN();
  }
}

void accumulate_listed(const Matrix& w, const std::vector<int>& inputs, const float* x,
                       float* acc) {
  for (int r : inputs) {
    const float xr = x[r];
    for (int e = w.start[r]; e < w.start[r + 1]; ++e) acc[w.column[e]] += xr * w.value[e];
  }
}

}  // namespace krc::narrow
