// The scan certifier's select heads (scan_certifier.hpp, obligation 2): for every t the
// target max(t - 2^l, 0) outscores every other key, with the gap that bounds the others'
// weights; then what a head adds to the residual when it fetches a window's encoding, and
// the static patterns (distinct position values) a part reads.
#include <algorithm>
#include <cmath>
#include <limits>

#include "certify/certify_common.hpp"
#include "certify/scan_certifier.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::certify_detail {

namespace {

using bounds::Accumulator;
using bounds::Format;
using bounds::Interval;

// Static patterns a part may read (distinct values of the static dimensions it reads over
// t >= 1): the scan's read the constant only; more would multiply the enumeration.
constexpr std::size_t kMaxPatterns = 16;

}  // namespace

// m's projection of the static part at every t = 0..T (the query's or the key's).
std::vector<Vec> ScanCertifier::projected(const SparseMatrix& m) const {
  const int hd = static_cast<int>(m.cols());
  std::vector<Vec> out(t_max_ + 1, Vec(hd));
  for (int t = 0; t <= t_max_; ++t) {
    interruption_point();  // one projection since the last (T may be 10^6)
    std::vector<Accumulator> acc(hd);
    for (int r = 0; r < m.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(m, r); it; ++it)
        acc[it.col()].add(it.value(), static_at_[t][r]);
    for (int c = 0; c < hd; ++c) out[t][c] = bounds::store(format_, acc[c].result());
  }
  return out;
}

// Returns the target's weight and the bound on the others' total weight, both over every t.
std::pair<Interval, double> ScanCertifier::fetch_weights(int l, nlohmann::json& obligation) {
  const AttentionHead& h = net_.layers[l].heads[0];
  const std::vector<Vec> q = projected(h.query), k = projected(h.key);
  const double scale = net_.attention_scale;
  auto score = [&](int t, int s) {
    Accumulator acc;
    for (std::size_t c = 0; c < q[t].size(); ++c) acc.add(q[t][c], k[s][c]);
    Interval v = bounds::store(format_, acc.result());
    if (scale == 1.0) return v;
    v = bounds::float32_inside(static_cast<float>(v.lo * scale), static_cast<float>(v.hi * scale));
    return bounds::store(format_, v);
  };
  const long long offset = 1LL << l;
  double min_gap = std::numeric_limits<double>::infinity(), worst_leak = 0.0;
  int gap_t = 0, gap_s = 0;
  std::vector<Interval> row(t_max_ + 1);
  for (int t = 0; t <= t_max_; ++t) {
    interruption_point();  // a row of t + 1 scores since the last
    const int target = static_cast<int>(std::max<long long>(t - offset, 0));
    for (int s = 0; s <= t; ++s) row[s] = score(t, s);
    double leak = 0.0;
    for (int s = 0; s <= t; ++s) {
      if (s == target) continue;
      const double gap = row[target].lo - row[s].hi;
      if (gap < min_gap) min_gap = gap, gap_t = t, gap_s = s;
      if (gap <= 0.0)
        refuse(l, h.name,
               "at t = " + std::to_string(t) + " the key s = " + std::to_string(s) + " scores " +
                   interval_text(row[s]) + ", not below the target s = " + std::to_string(target) +
                   "'s " + interval_text(row[target]) + ": the fetch may take the wrong position");
      // exp of fl32(s - m) <= e^(gap bound), within 2 ulp; plus float32's least subnormal.
      leak += std::exp(-gap) * (1.0 + 0x1p-20) + 0x1p-149;
    }
    worst_leak = std::max(worst_leak, leak);
  }
  // The weights' float32 sum is 1 (the target's exp(0)) plus at most 2 leak: it rounds to 1
  // when that is below half an ulp; the target's weight R(1/S) follows (monotone).
  const double s_hi = bounds::float32_inside(1.0, 1.0 + 2.0 * worst_leak * (1.0 + 0x1p-10)).hi;
  Interval p = bounds::store(format_, bounds::float32_inside(std::nextafter(1.0 / s_hi, 0.0), 1.0));
  // Each other weight R(w / S) <= R(w): at most 2^-7 more in bf16 and fp16 (their least
  // subnormals, 2^-133 and 2^-24, are reached only by weights that round to 0 or below 2w).
  double others = worst_leak;
  if (format_ == Format::BFloat16) others = others * (1.0 + 0x1p-7) + (t_max_ + 1) * 0x1p-133;
  if (format_ == Format::Float16) others = others * 2.0;
  obligation["min_gap"] = min_gap;
  obligation["at"] = {{"t", gap_t}, {"s", gap_s}};
  obligation["target"] = "max(t - " + std::to_string(offset) + ", 0)";
  obligation["leak"] = others;
  obligation["target_weight"] = {p.lo, p.hi};
  return {p, others};
}

// What the head adds to the residual when it fetches a window encoded by `x`.
Vec ScanCertifier::fetched(int l, const Vec& x, Interval p, double others,
                           const std::vector<double>& bound) const {
  const AttentionHead& h = net_.layers[l].heads[0];
  const int hd = static_cast<int>(h.value.cols());
  std::vector<Accumulator> acc(hd);
  for (int r = 0; r < h.value.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(h.value, r); it; ++it) acc[it.col()].add(it.value(), x[r]);
  Vec z(hd);
  for (int c = 0; c < hd; ++c) {
    const Interval v = bounds::store(format_, acc[c].result());
    z[c] = bounds::store(format_, bounds::dominated_sum(p, v, others * bound[c], t_max_ + 1));
  }
  std::vector<Accumulator> out(d_);
  for (int c = 0; c < h.output.outerSize(); ++c)
    for (SparseMatrix::InnerIterator it(h.output, c); it; ++it) out[it.col()].add(it.value(), z[c]);
  Vec o(d_);
  for (int r = 0; r < d_; ++r) o[r] = bounds::store(format_, out[r].result());
  return o;
}

// The distinct values the static dimensions `read` take over t >= from (1: the letters'
// positions; 0: BOS's too), each with a t that has them: a part that reads the constant
// feature sees one; one that reads the position, T.
std::map<std::vector<double>, int> ScanCertifier::static_patterns(const std::vector<int>& read,
                                                                  int layer,
                                                                  const std::string& part,
                                                                  int from) const {
  std::map<std::vector<double>, int> patterns;
  for (int t = from; t <= t_max_; ++t) {
    std::vector<double> key;
    for (int c : read) key.push_back(static_at_[t][c].lo), key.push_back(static_at_[t][c].hi);
    patterns.emplace(key, t);
    if (patterns.size() > kMaxPatterns)
      refuse(layer, part,
             "reads position-dependent dimensions (more than " + std::to_string(kMaxPatterns) +
                 " distinct values over t): the scan's parts read the constant only");
  }
  return patterns;
}

}  // namespace krc::certify_detail
