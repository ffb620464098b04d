#include "forward/key_tree.hpp"

#include <cmath>
#include <cstring>

namespace krc::kernels {

namespace {
// 8 doubles: one AVX-512 register, two AVX2 ones (GCC/Clang vector extension).
using Vec8 = double __attribute__((vector_size(64)));
static_assert(KeyTree::kFan == 8);
}  // namespace

template <typename S>
void KeyTree::build(const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& kt,
                    int from, int n) {
  const int qd = static_cast<int>(kt.rows());
  std::vector<int> count{(n + kLeaf - 1) / kLeaf};
  while (count.back() > 1) count.push_back((count.back() + kFan - 1) / kFan);
  if (qd != qd_ || count != count_) {  // a new shape: every node anew
    qd_ = qd;
    count_ = count;
    const int levels = static_cast<int>(count.size());
    stride_.assign(levels, 0);
    leaf_keys_.assign(levels, kLeaf);
    lo_.assign(levels, {});
    hi_.assign(levels, {});
    for (int l = 0; l < levels; ++l) {
      // Room for the kFan children of every parent, so that bounds load whole vectors.
      stride_[l] = l + 1 < levels ? kFan * count[l + 1] : kFan;
      if (l > 0) leaf_keys_[l] = kFan * leaf_keys_[l - 1];
      lo_[l].assign(static_cast<std::size_t>(qd) * stride_[l], 0.0);
      hi_[l].assign(static_cast<std::size_t>(qd) * stride_[l], 0.0);
    }
    from = 0;
  }
  keys_ = n;
  int first = from / kLeaf;
  for (int p = first; p < count_[0]; ++p) {
    const int begin = p * kLeaf, end = std::min(n, begin + kLeaf);
    for (int k = 0; k < qd; ++k) {
      const S* key = kt.row(k).data();
      double lo = key[begin], hi = key[begin];
      for (int j = begin + 1; j < end; ++j) {
        lo = std::min(lo, static_cast<double>(key[j]));
        hi = std::max(hi, static_cast<double>(key[j]));
      }
      lo_[0][static_cast<std::size_t>(k) * stride_[0] + p] = lo;
      hi_[0][static_cast<std::size_t>(k) * stride_[0] + p] = hi;
    }
  }
  for (std::size_t l = 1; l < count_.size(); ++l) {
    first /= kFan;
    for (int p = first; p < count_[l]; ++p) {
      const int c0 = kFan * p, c1 = std::min(count_[l - 1], c0 + kFan);
      for (int k = 0; k < qd; ++k) {
        const double* lo_child = lo_[l - 1].data() + static_cast<std::size_t>(k) * stride_[l - 1];
        const double* hi_child = hi_[l - 1].data() + static_cast<std::size_t>(k) * stride_[l - 1];
        double lo = lo_child[c0], hi = hi_child[c0];
        for (int c = c0 + 1; c < c1; ++c) {
          lo = std::min(lo, lo_child[c]);
          hi = std::max(hi, hi_child[c]);
        }
        lo_[l][static_cast<std::size_t>(k) * stride_[l] + p] = lo;
        hi_[l][static_cast<std::size_t>(k) * stride_[l] + p] = hi;
      }
    }
  }
}

template void KeyTree::build<float>(
    const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>&, int, int);
template void KeyTree::build<double>(
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>&, int, int);

KeyTree::Query::Query(const KeyTree& tree, const double* q, int qd, double scale, int last,
                      double unit)
    : positive_(qd), negative_(qd), scale_(std::abs(scale)), last_(last) {
  // scale (q . k) = |scale| (sign(scale) q . k): bound the dot of the sign-adjusted query.
  const double sign = scale < 0 ? -1.0 : 1.0;
  const int top = static_cast<int>(tree.count_.size()) - 1;
  double magnitude = 0.0;  // sum_k |q_k| max_j |k_jk| >= sum_k |q_k k_jk| for every key
  for (int k = 0; k < qd; ++k) {
    const double value = sign * q[k];
    positive_[k] = std::max(value, 0.0);
    negative_[k] = std::min(value, 0.0);
    const std::size_t at = static_cast<std::size_t>(k) * tree.stride_[top];
    magnitude +=
        std::abs(value) * std::max(std::abs(tree.lo_[top][at]), std::abs(tree.hi_[top][at]));
  }
  // A dot of qd products summed in order errs by at most (qd + 1) unit magnitude (first
  // order), the scaling by one more unit, and the bound (summed in double) by as much again:
  // a factor 4 to spare, and an absolute floor for denormal magnitudes.
  margin_ = 4.0 * (2.0 * qd + 4.0) * unit * scale_ * magnitude + 1e-300;
}

void KeyTree::child_bounds(const Query& query, int l, int p, double* bound) const {
  const int stride = stride_[l - 1];
  const double* lo = lo_[l - 1].data() + kFan * p;
  const double* hi = hi_[l - 1].data() + kFan * p;
  Vec8 sum = {};
  for (int k = 0; k < qd_; ++k) {
    Vec8 low, high;
    std::memcpy(&low, lo + static_cast<std::size_t>(k) * stride, sizeof low);
    std::memcpy(&high, hi + static_cast<std::size_t>(k) * stride, sizeof high);
    sum += query.positive_[k] * high + query.negative_[k] * low;
  }
  sum *= query.scale_;
  std::memcpy(bound, &sum, sizeof sum);
}

}  // namespace krc::kernels
