#include "forward/key_tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace krc::kernels {

namespace {

constexpr double kPi = 3.14159265358979323846;
// Slack for the rounding of the arcs' directions and half-widths (acos near +-1 loses about
// 1e-8 of an angle), and, on the bound's cosine, for the rounding of dot and cross products of
// unit vectors. Both only loosen the bound: pruning needs gaps of several
// lambda, and they move a pair's bound by 1e-7 of |q| r.
constexpr double kAngleSlack = 1e-7, kCosineSlack = 1e-7;
// Keys of one radius, to within float32's rounding of a (cos, sin) pair, are taken as a pair.
constexpr double kSameRadius = 1e-5;

double angle_between(double x0, double y0, double x1, double y1) {
  return std::acos(std::clamp(x0 * x1 + y0 * y1, -1.0, 1.0));
}

// An arc that holds `count` directions (ux, uy), each widened by widen[i] (a leaf's keys: 0; a
// node's children: their half-widths): their mean direction m and the widest angle from it, as
// every direction lies within angle(m, u_i) + widen_i of m. The full circle (w = pi) where a part
// is full already or the directions cancel (a mean shorter than min_length).
struct Arc {
  double ux = 1, uy = 0, w = kPi;
};
Arc fit_arc(const double* ux, const double* uy, const double* widen, int count, double min_length,
            bool full) {
  double sx = 0, sy = 0;
  for (int i = 0; i < count; ++i) sx += ux[i], sy += uy[i];
  const double length = std::hypot(sx, sy);
  if (full || !(length > min_length)) return {};
  Arc arc{sx / length, sy / length, 0.0};
  for (int i = 0; i < count; ++i)
    arc.w = std::max(arc.w, angle_between(arc.ux, arc.uy, ux[i], uy[i]) + widen[i]);
  arc.w += kAngleSlack;
  return arc;
}
}  // namespace

void KeyTree::Arcs::assign(std::size_t size) {
  for (auto* v : {&ux, &uy, &w, &cos_w, &sin_w, &r_max, &r_min}) v->assign(size, 0.0);
}

// A node of level l > 0 from its children: the mean of their directions, widened by the farthest
// child's arc (every key lies within w_c of m_c, and m_c within angle(m, m_c) of m).
void KeyTree::parent_arc(int l, int pair, int p) {
  const Arcs& child = arcs_[l - 1];
  const std::size_t base = static_cast<std::size_t>(pair) * stride_[l - 1] + kFan * p;
  const int count = std::min(count_[l - 1] - kFan * p, kFan);
  double r_max = 0, r_min = std::numeric_limits<double>::infinity();
  bool full = false;
  for (int c = 0; c < count; ++c) {
    r_max = std::isnan(child.r_max[base + c]) ? child.r_max[base + c]
                                              : std::max(r_max, child.r_max[base + c]);
    r_min = std::min(r_min, child.r_min[base + c]);
    full = full || !(child.w[base + c] < kPi);
  }
  const Arc arc =
      fit_arc(&child.ux[base], &child.uy[base], &child.w[base], count, 1e-6 * count, full);
  set_arc(l, pair, p, arc.ux, arc.uy, arc.w, r_max, r_min);
}

// Stores node p's arc; a half-width of pi or more (or none) is the full circle.
void KeyTree::set_arc(int l, int pair, int p, double ux, double uy, double w, double r_max,
                      double r_min) {
  if (!(w < kPi)) ux = 1, uy = 0, w = kPi;
  Arcs& node = arcs_[l];
  const std::size_t at = static_cast<std::size_t>(pair) * stride_[l] + p;
  node.ux[at] = ux;
  node.uy[at] = uy;
  node.w[at] = w;
  node.cos_w[at] = w < kPi ? std::cos(w) : -1.0;
  node.sin_w[at] = w < kPi ? std::sin(w) : 0.0;
  node.r_max[at] = r_max;
  node.r_min[at] = r_min;
}

// Every level's nodes for qd dims and count[l] nodes of level l, zeroed.
void KeyTree::reshape(int qd, std::vector<int> count) {
  qd_ = qd;
  count_ = std::move(count);
  const int levels = static_cast<int>(count_.size());
  stride_.assign(levels, 0);
  leaf_keys_.assign(levels, kLeaf);
  lo_.assign(levels, {});
  hi_.assign(levels, {});
  arcs_.assign(levels, {});
  for (int l = 0; l < levels; ++l) {
    // Room for the kFan children of every parent, so that bounds load whole vectors.
    stride_[l] = l + 1 < levels ? kFan * count_[l + 1] : kFan;
    if (l > 0) leaf_keys_[l] = kFan * leaf_keys_[l - 1];
    lo_[l].assign(static_cast<std::size_t>(qd) * stride_[l], 0.0);
    hi_[l].assign(static_cast<std::size_t>(qd) * stride_[l], 0.0);
    arcs_[l].assign(pair_dim_.size() * stride_[l]);
  }
}

// The pairs: dims k, k + 1 on which every key has one nonzero radius (taken in order).
template <typename S>
void KeyTree::choose_pairs(
    const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& kt, int n) {
  const int qd = static_cast<int>(kt.rows());
  pair_dim_.clear();
  single_dim_.clear();
  for (int k = 0; k < qd; ++k) {
    bool pair = k + 1 < qd;
    if (pair) {
      const S* x = kt.row(k).data();
      const S* y = kt.row(k + 1).data();
      const double r0 = double(x[0]) * x[0] + double(y[0]) * y[0];
      pair = r0 > 0 && std::isfinite(r0);
      for (int j = 1; pair && j < n; ++j)
        pair = std::abs(double(x[j]) * x[j] + double(y[j]) * y[j] - r0) <= kSameRadius * r0;
    }
    if (pair)
      pair_dim_.push_back(k++);
    else
      single_dim_.push_back(k);
  }
}

// Leaf p's arc on a pair: its keys' mean direction, and the widest angle from it (keys at the
// origin have no direction; they score 0 on the pair, which r_min = 0 allows).
template <typename S>
void KeyTree::leaf_arc(const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& kt,
                       int pair, int p, int begin, int end) {
  const S* x = kt.row(pair_dim_[pair]).data();
  const S* y = kt.row(pair_dim_[pair] + 1).data();
  double ux[kLeaf], uy[kLeaf], widen[kLeaf] = {};
  double r_max = 0, r_min = std::numeric_limits<double>::infinity();
  int count = 0;  // the keys with a direction
  for (int j = begin; j < end; ++j) {
    const double r = std::hypot(double(x[j]), double(y[j]));
    // A key that is not a number makes the arc's bound no number: child_bounds then gives no
    // bound (infinity), and the node is never pruned.
    r_max = std::isnan(r) ? std::numeric_limits<double>::quiet_NaN() : std::max(r_max, r);
    r_min = std::min(r_min, r);
    if (r > 0) ux[count] = x[j] / r, uy[count++] = y[j] / r;
  }
  const Arc arc = fit_arc(ux, uy, widen, count, 1e-6 * (end - begin), !std::isfinite(r_max));
  set_arc(0, pair, p, arc.ux, arc.uy, arc.w, r_max, r_min);
}

template <typename S>
void KeyTree::build(const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& kt,
                    int from, int n) {
  const int qd = static_cast<int>(kt.rows());
  std::vector<int> count{(n + kLeaf - 1) / kLeaf};
  while (count.back() > 1) count.push_back((count.back() + kFan - 1) / kFan);
  if (qd != qd_ || count != count_) {  // a new shape: every node anew
    choose_pairs(kt, n);
    reshape(qd, std::move(count));
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
    for (std::size_t pair = 0; pair < pair_dim_.size(); ++pair)
      leaf_arc(kt, static_cast<int>(pair), p, begin, end);
  }
  for (std::size_t l = 1; l < count_.size(); ++l) {
    first /= kFan;
    for (int p = first; p < count_[l]; ++p) {
      for (std::size_t pair = 0; pair < pair_dim_.size(); ++pair)
        parent_arc(static_cast<int>(l), static_cast<int>(pair), p);
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
  norm_.reserve(tree.pair_dim_.size());
  x_.reserve(tree.pair_dim_.size());
  y_.reserve(tree.pair_dim_.size());
  for (int k : tree.pair_dim_) {
    const double x = sign * q[k], y = sign * q[k + 1], norm = std::hypot(x, y);
    norm_.push_back(norm);
    x_.push_back(norm > 0 ? x / norm : 1.0);
    y_.push_back(norm > 0 ? y / norm : 0.0);
  }
  for (int k = 0; k < qd; ++k) {
    const double value = sign * q[k];
    positive_[k] = std::max(value, 0.0);
    negative_[k] = std::min(value, 0.0);
  }
  // A dot of qd products summed in order errs by at most (qd + 1) unit magnitude (first
  // order), where magnitude = sum_k |q_k k_jk|, the scaling by one more unit, and the bound
  // (summed in double) by as much again: a factor 4 to spare. child_bounds adds this margin per
  // node, from the node's own magnitude sum_k |q_k| max(|lo_k|, |hi_k|): one margin for the
  // whole tree was as large as its largest product, and the phase fetches' BOS dimension
  // (query lambda_bos (k + 0.5 - t), some 6e6 at t = 10,000, against a key that is 0 past BOS)
  // made it 92, more than the gap pruning needs. An absolute floor for denormal magnitudes.
  margin_factor_ = 4.0 * (2.0 * qd + 4.0) * unit;
  margin_ = 1e-300;
}

void KeyTree::child_bounds(const Query& query, int l, int p, double* bound) const {
  // Plain loops over the kFan children, which the compiler turns into vector code (selects
  // included); vector-extension conditionals compiled to scalar compares on AVX2.
  const std::size_t stride = stride_[l - 1];
  const double* lo = lo_[l - 1].data() + kFan * p;
  const double* hi = hi_[l - 1].data() + kFan * p;
  double sum[kFan] = {}, magnitude[kFan] = {};  // magnitude: sum_k |q_k| max(|lo_k|, |hi_k|)
  for (int k : single_dim_) {
    const double* low = lo + k * stride;
    const double* high = hi + k * stride;
    const double up = query.positive_[k], down = query.negative_[k], size = up - down;
    for (int i = 0; i < kFan; ++i) {
      sum[i] += up * high[i] + down * low[i];
      magnitude[i] += size * std::max(std::fabs(low[i]), std::fabs(high[i]));
    }
  }
  const Arcs& arcs = arcs_[l - 1];
  const double infinity = std::numeric_limits<double>::infinity();
  for (std::size_t pair = 0; pair < pair_dim_.size(); ++pair) {
    const std::size_t at = pair * stride + kFan * p;
    const double* ux = arcs.ux.data() + at;
    const double* uy = arcs.uy.data() + at;
    const double* cos_w = arcs.cos_w.data() + at;
    const double* sin_w = arcs.sin_w.data() + at;
    const double* r_max = arcs.r_max.data() + at;
    const double* r_min = arcs.r_min.data() + at;
    const double x = query.x_[pair], y = query.y_[pair], norm = query.norm_[pair];
    for (int i = 0; i < kFan; ++i) {
      // cos and sin of the angle d from q to the arc's direction (unit vectors: their dot and
      // the size of their cross product), then the cosine from q to the arc's nearest edge,
      // cos(d - w) = cos d cos w + sin d sin w, or 1 where q's direction lies in the arc.
      const double c = x * ux[i] + y * uy[i], sin_d = std::fabs(x * uy[i] - y * ux[i]);
      const double cosine = (c >= cos_w[i] ? 1.0 : c * cos_w[i] + sin_d * sin_w[i]) + kCosineSlack;
      const double arc = norm * (cosine >= 0 ? r_max[i] * cosine : r_min[i] * cosine);
      // A key that is not a number: no bound (the comparisons that prune are false for NaN).
      sum[i] += arc == arc ? arc : infinity;
      // |q_x k_x| + |q_y k_y| <= |q| |k| (Cauchy-Schwarz), for the margin.
      magnitude[i] += norm * r_max[i];
    }
  }
  for (int i = 0; i < kFan; ++i)
    bound[i] = query.scale_ * (sum[i] + query.margin_factor_ * magnitude[i]);
}

}  // namespace krc::kernels
