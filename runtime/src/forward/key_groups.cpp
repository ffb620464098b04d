// Attention rows computed over groups of identical keys instead of over positions: for a
// query row i every member of a group g has the same score s_g, so
//   sum_{j<=i} exp(s_j - m) v_j = sum_g exp(s_g - m) (sum of g's value rows j <= i),
// and the normaliser likewise with member counts: the dense formula re-associated. A term
// is skipped exactly when the dense path skips each of its members (the same score), and
// argmax ties go to the latest member of the best groups, as they go to the latest position.
#include <cstring>

#include "forward/forward_kernels.hpp"

namespace krc::kernels {

namespace {

std::uint64_t key_hash(const DoubleRows& kt, int j) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (Eigen::Index k = 0; k < kt.rows(); ++k) {
    const double value = kt(k, j);
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return h;
}

bool same_key(const DoubleRows& kt, int a, int b) {
  for (Eigen::Index k = 0; k < kt.rows(); ++k) {
    const double x = kt(k, a), y = kt(k, b);
    if (std::memcmp(&x, &y, sizeof x) != 0) return false;
  }
  return true;
}

}  // namespace

void KeyGroups::keep_rows(int from) {
  if (static_cast<int>(group_of_.size()) > from) {
    group_of_.resize(from);
    groups_after_.resize(from);
    const int groups = from > 0 ? groups_after_[from - 1] : 0;
    hash_.resize(groups);
    first_.resize(groups);
  }
  if (overflow_row_ >= from) overflow_row_ = -1;
  if (summed_ > from) summed_ = 0;  // the sums hold rows this word does not share
}

void KeyGroups::assign(const HeadState& h, int j) {
  const int groups = static_cast<int>(first_.size());
  int group = -1;
  if (overflow_row_ < 0) {
    const std::uint64_t hash = key_hash(h.kt, j);
    for (int g = groups - 1; g >= 0 && group < 0; --g)
      if (hash_[g] == hash && same_key(h.kt, first_[g], j)) group = g;
    if (group < 0) {
      if (groups == kMaxGroups) {
        overflow_row_ = j;
      } else {
        group = groups;
        hash_.push_back(hash);
        first_.push_back(j);
      }
    }
  }
  group_of_.push_back(group);
  groups_after_.push_back(static_cast<int>(first_.size()));
}

bool KeyGroups::grouped(const HeadState& h, int i) {
  while (static_cast<int>(group_of_.size()) <= i) assign(h, static_cast<int>(group_of_.size()));
  return group_of_[i] >= 0 && kRowsPerGroup * groups_after_[i] <= i + 1;
}

void KeyGroups::sum_through(const HeadState& h, int i, int value_dim) {
  if (summed_ == 0) {
    count_.clear();
    last_.clear();
    value_sum_.clear();
  }
  const int groups = groups_after_[i];
  count_.resize(groups, 0.0);
  last_.resize(groups, -1);
  value_sum_.resize(static_cast<std::size_t>(groups) * value_dim, 0.0);
  for (; summed_ <= i; ++summed_) {
    const int g = group_of_[summed_];
    count_[g] += 1.0;
    last_[g] = summed_;
    double* sum = value_sum_.data() + static_cast<std::size_t>(g) * value_dim;
    for (int k = h.v.start[summed_]; k < h.v.start[summed_ + 1]; ++k)
      sum[h.v.index[k]] += h.v.value[k];
  }
}

void KeyGroups::mix(const HeadState& h, int i, int value_dim, double scale, bool argmax,
                    double threshold, AttentionScratch& s) {
  sum_through(h, i, value_dim);
  const int groups = groups_after_[i];
  const int qd = static_cast<int>(h.q.cols());
  const double* q = h.q.row(i).data();
  s.group_score.resize(kMaxGroups);
  double* score = s.group_score.data();
  double max = 0.0;
  for (int g = 0; g < groups; ++g) {
    double dot = 0.0;  // in the order of the dense scores kernel
    for (int k = 0; k < qd; ++k) dot += q[k] * h.kt(k, first_[g]);
    score[g] = scale * dot;
    if (g == 0 || score[g] > max) max = score[g];
  }
  double* acc = s.acc.data();
  if (argmax) {
    int best = 0;
    for (int g = 1; g < groups; ++g)
      if (score[g] > score[best] || (score[g] == score[best] && last_[g] > last_[best])) best = g;
    const int j = last_[best];
    for (int k = h.v.start[j]; k < h.v.start[j + 1]; ++k) acc[h.v.index[k]] = h.v.value[k];
    return;
  }
  int kept = 0;
  for (int g = 0; g < groups; ++g)
    if (score[g] >= max + threshold) {
      s.kept[kept] = g;
      s.diff[kept++] = score[g] - max;
    }
  exp_in_place(s.diff, kept);
  double sum = 0.0;
  for (int t = 0; t < kept; ++t) {
    const double w = s.diff[t];
    const int g = s.kept[t];
    sum += w * count_[g];
    const double* values = value_sum_.data() + static_cast<std::size_t>(g) * value_dim;
    for (int c = 0; c < value_dim; ++c) acc[c] += w * values[c];
  }
  for (int c = 0; c < value_dim; ++c) acc[c] /= sum;
}

}  // namespace krc::kernels
