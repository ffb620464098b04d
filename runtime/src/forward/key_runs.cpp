// Runs of consecutive, bitwise-equal key rows for the Float32 attention (float32_kernels.hpp).
#include <cstring>

#include "forward/float32_kernels.hpp"

namespace krc::kernels::f32 {

namespace {

bool same_key(const FloatRows& kt, int a, int b) {
  for (Eigen::Index k = 0; k < kt.rows(); ++k) {
    const float x = kt(k, a), y = kt(k, b);
    if (std::memcmp(&x, &y, sizeof x) != 0) return false;
  }
  return true;
}

}  // namespace

void KeyRuns::keep_rows(int from) {
  // The statistics of the last run hold rows this word may not share: rebuilt from row 0.
  if (rows_ > from || overflow_) {
    runs_.clear();
    columns_.clear();
    rows_ = 0;
    overflow_ = false;
  }
}

bool KeyRuns::usable(const HeadState& h, int i, int value_dim) {
  if (value_dim != value_dim_) {
    keep_rows(0);
    value_dim_ = value_dim;
  }
  while (rows_ <= i && !overflow_) add(h, rows_);
  return !overflow_ && kRowsPerRun * runs() <= i + 1;
}

void KeyRuns::add(const HeadState& h, int j) {
  if (runs_.empty() || !same_key(h.kt, runs_.back().begin, j)) {
    if (runs() == kMaxRuns) {
      overflow_ = true;
      return;
    }
    runs_.push_back({j});
    columns_.resize(static_cast<std::size_t>(runs()) * value_dim_);
  }
  Column* columns = columns_.data() + static_cast<std::size_t>(runs() - 1) * value_dim_;
  for (int k = h.v.start[j]; k < h.v.start[j + 1]; ++k) {
    Column& column = columns[h.v.index[k]];
    const float value = h.v.value[k];
    if (column.count == 0)
      column.value = value;
    else if (std::memcmp(&value, &column.value, sizeof value) != 0)
      column.mixed = true;
    ++column.count;
  }
  ++rows_;
}

}  // namespace krc::kernels::f32
