#pragma once
// Internal to the runtime (forward_kernels.hpp uses it). Bounds on attention scores over blocks of
// keys, so that a long query row visits only the keys whose softmax weight can be
// nonzero instead of every causal key: O(T log T)-like per head for position-code lookups and
// memory heads, O(T sqrt T) for the block sums of kr counters, where the dense scores cost
// O(T^2).
//
// Legend: qd = query dims; a leaf = 16 consecutive keys; a node of level l covers 8^l leaves;
// lo/hi = the per-dimension minimum/maximum of the keys under a node.
//
// Why the result is bitwise the dense one: the row maximum is found exactly (branch and bound:
// a node whose bound cannot beat the best score so far holds no larger score), and a node whose
// bound lies below the row's cutoff holds only scores below it, i.e. softmax terms that are
// exact zeros and that the dense path skips too. Every score that is computed comes from the
// caller's leaf kernel, the same arithmetic as the dense scores. A bound is
// scale * sum_k max(q_k lo_k, q_k hi_k), an upper bound of the exact score; `margin` covers the
// rounding of both the bound and the computed score, so pruning is conservative.
//
// Pairs of key dimensions on a circle (the (cos, sin) pairs of a position phase, which the
// integer-coordinate scan fetches by) are bounded by their arc instead of their box: a node
// keeps, per pair, the largest and smallest radius of its keys and an arc (a mean direction m and
// a half-width w) that holds every key's direction. A query pair q then scores at most
// |q| r cos(max(0, angle(q, m) - w)) on it (the radius r_max where that cosine is >= 0, r_min
// where it is negative). The box is loose by up to sqrt 2 on every pair whose keys go round the
// circle (the fast frequencies, in every node above a leaf): a phase fetch over 16,385 keys
// visits 93 leaves with boxes, 38 with arcs. Any pairing is sound, since the arc bound holds for
// any keys; pairs are taken where every key has the same radius when the tree is built whole.
//
// The rounding margin is each node's own, from sum_k |q_k| max(|lo_k|, |hi_k|) over its keys (and
// |q| r_max on a pair): one margin for the whole tree, from its largest products, was 92 score
// units on the phase fetches (their BOS dimension: a query of -6e6 at t = 10,000, a key that is
// 0 past BOS), more than the gap pruning needs, and they visited every node (abab's scan at
// 65,536 letters: 395 s a word, now 85 s).
#include <Eigen/Dense>
#include <algorithm>
#include <limits>
#include <vector>

namespace krc::kernels {

class KeyTree {
 public:
  static constexpr int kLeaf = 16, kFan = 8;

  // The bounds of keys [0, n) of kt [qd, >= n]: rebuilt from key `from` on (keys before it
  // are unchanged since the last build), or entirely when the shape changed.
  template <typename S>
  void build(const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& kt, int from,
             int n);
  int keys() const { return keys_; }

  // One query row as the bounds read it: scores scale * (q . k_j) for keys j <= last.
  class Query {
   public:
    // unit: the relative rounding error of one operation of the score arithmetic (2^-53 for
    // double, 2^-24 for float32 scores).
    Query(const KeyTree& tree, const double* q, int qd, double scale, int last, double unit);
    int last() const { return last_; }

   private:
    friend class KeyTree;
    std::vector<double> positive_, negative_;  // sign(scale) q split by sign
    // Per pair of the tree: |q| on the pair's two dims, and q's direction there.
    std::vector<double> norm_, x_, y_;
    double scale_ = 1, margin_ = 0, margin_factor_ = 0;
    int last_ = 0;
  };

  // Scores(leaf, out): out[0, 16) = the scores of keys 16 leaf .. 16 leaf + 15 as the dense
  // kernel computes them (entries past `last` are ignored).
  template <typename Scores>
  double max_score(const Query& query, Scores scores) const;
  // emit(j, score) for every key j <= last whose score is >= floor, in ascending j; keys of
  // pruned nodes have scores below floor.
  template <typename Scores, typename Emit>
  void each_at_least(const Query& query, double floor, Scores scores, Emit emit) const;
  // The latest key j <= last whose score equals `value`, or -1.
  template <typename Scores>
  int latest_equal(const Query& query, double value, Scores scores) const;

 private:
  // bound[c] for the children of node p of level l (level l - 1, indices kFan p + c).
  void child_bounds(const Query& query, int l, int p, double* bound) const;
  int first_key(int l, int p) const { return p * leaf_keys_[l]; }
  int children(const Query& query, int l, int p) const;  // the causal ones

  // A node's arcs, per pair: [pair][stride] each. A full circle is w = pi (cos_w = -1).
  struct Arcs {
    std::vector<double> ux, uy, w, cos_w, sin_w, r_max, r_min;
    void assign(std::size_t size);
  };
  void reshape(int qd, std::vector<int> count);
  template <typename S>
  void choose_pairs(const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& kt,
                    int n);
  template <typename S>
  void leaf_arc(const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& kt,
                int pair, int p, int begin, int end);
  void parent_arc(int l, int pair, int p);
  void set_arc(int l, int pair, int p, double ux, double uy, double w, double r_max, double r_min);

  int qd_ = 0, keys_ = 0;
  std::vector<int> count_, stride_, leaf_keys_;  // per level: nodes, padded width, keys per node
  std::vector<std::vector<double>> lo_, hi_;     // per level: [qd][stride]
  std::vector<int> pair_dim_;                    // the first dim of each pair (the other: + 1)
  std::vector<int> single_dim_;                  // the dims in no pair
  std::vector<Arcs> arcs_;                       // per level
};

inline int KeyTree::children(const Query& query, int l, int p) const {
  const int first = kFan * p, child_keys = leaf_keys_[l - 1];
  int c = 0;
  while (c < kFan && first + c < count_[l - 1] && (first + c) * child_keys <= query.last_) ++c;
  return c;
}

template <typename Scores>
double KeyTree::max_score(const Query& query, Scores scores) const {
  double best = -std::numeric_limits<double>::infinity();
  double leaf[kLeaf];
  auto visit = [&](auto& self, int l, int p) -> void {
    if (l == 0) {
      scores(p, leaf);
      const int end = std::min(kLeaf, query.last_ - p * kLeaf + 1);
      for (int j = 0; j < end; ++j) best = std::max(best, leaf[j]);
      return;
    }
    double bound[kFan];
    child_bounds(query, l, p, bound);
    const int count = children(query, l, p);
    int order[kFan];  // the children by bound, best first (insertion sort of at most 8)
    for (int c = 0; c < count; ++c) {
      int k = c;
      for (; k > 0 && bound[order[k - 1]] < bound[c]; --k) order[k] = order[k - 1];
      order[k] = c;
    }
    for (int k = 0; k < count; ++k) {
      if (bound[order[k]] + query.margin_ < best) break;  // nothing below beats best
      self(self, l - 1, kFan * p + order[k]);
    }
  };
  visit(visit, static_cast<int>(count_.size()) - 1, 0);
  return best;
}

template <typename Scores, typename Emit>
void KeyTree::each_at_least(const Query& query, double floor, Scores scores, Emit emit) const {
  double leaf[kLeaf];
  auto visit = [&](auto& self, int l, int p) -> void {
    if (l == 0) {
      scores(p, leaf);
      const int end = std::min(kLeaf, query.last_ - p * kLeaf + 1);
      for (int j = 0; j < end; ++j)
        if (leaf[j] >= floor) emit(p * kLeaf + j, leaf[j]);
      return;
    }
    double bound[kFan];
    child_bounds(query, l, p, bound);
    const int count = children(query, l, p);
    for (int c = 0; c < count; ++c)
      if (bound[c] + query.margin_ >= floor) self(self, l - 1, kFan * p + c);
  };
  visit(visit, static_cast<int>(count_.size()) - 1, 0);
}

template <typename Scores>
int KeyTree::latest_equal(const Query& query, double value, Scores scores) const {
  double leaf[kLeaf];
  auto visit = [&](auto& self, int l, int p) -> int {
    if (l == 0) {
      scores(p, leaf);
      for (int j = std::min(kLeaf, query.last_ - p * kLeaf + 1) - 1; j >= 0; --j)
        if (leaf[j] == value) return p * kLeaf + j;
      return -1;
    }
    double bound[kFan];
    child_bounds(query, l, p, bound);
    for (int c = children(query, l, p) - 1; c >= 0; --c)
      if (bound[c] + query.margin_ >= value)
        if (const int j = self(self, l - 1, kFan * p + c); j >= 0) return j;
    return -1;
  };
  return visit(visit, static_cast<int>(count_.size()) - 1, 0);
}

// Whether a head's next long row goes through the tree. A select head's rows always do (one key
// or a few survive). An average head's do until a row keeps more than a quarter of its keys (a
// plain average, where the bounds prune nothing and only add their cost); then the next
// kDenseRows rows score every key before the tree is tried again. Either path gives bitwise
// the same row, so this decides the time only.
class TreeUse {
 public:
  static constexpr int kDenseRows = 256;
  bool wanted(int row) const { return row >= dense_until_; }
  void kept(bool select, int row, int count) {
    if (!select && 4 * count > row + 1) dense_until_ = row + kDenseRows;
  }

 private:
  int dense_until_ = 0;
};

}  // namespace krc::kernels
