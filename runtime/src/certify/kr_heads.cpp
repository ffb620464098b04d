// The kr certifier's head obligations (kr_certifier.hpp; compiler/certify.md, the kr design's
// network obligations 2-4). Every head's query must read static dimensions only and its key
// static ones plus at most one letter group, so its score is a function of (t, s, v): the
// query position, the key position and the value v of that group at s. Checked over every
// t <= T, s <= t and v, never over words:
//  - select heads: for every t and every (s*, v*) that can be the argmax key of some word
//    (its score reaching, for every other key, the least score that key can take), no other
//    key can score alike (the argmax is unique in every word), and the others' total weight is at
//    most the sum of e^(score - score*) over every (s, v) scoring below; the least gap and the
//    largest such leak are recorded;
//  - whole-sum average heads (role "counter sum", kr's counters up to 2,048: BOS scores ln(N + 1 -
//  t), every
//    letter alike, so each letter weighs 1/(N + 1) in exact arithmetic): the value must give
//    BOS 0 and every letter an increment u/(N + 1) that is an integer, and for every t the
//    computed count is within eps(t) of the integer sum of the increments, eps(t) bounding
//    float32 in any order (exp within 2 ulp, the normaliser's t + 1 terms, the division, the
//    weighted sum's t + 1 terms, the output projection); eps(t) < 3/8, the combs' tolerance.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "certify/certify_common.hpp"
#include "certify/kr_certifier.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::certify_detail {

namespace {

using bounds::Accumulator;
using bounds::Interval;

constexpr double kUnit = 0x1p-24;
constexpr double kInf = std::numeric_limits<double>::infinity();

double gamma(double n) { return n * kUnit / (1.0 - n * kUnit); }

// m's projection of a point residual x, computed in float32 in any order.
std::vector<Interval> project(const std::vector<double>& x, const SparseMatrix& m) {
  std::vector<Accumulator> acc(m.cols());
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      acc[it.col()].add(it.value(), Interval::point(x[r]));
  std::vector<Interval> out(m.cols());
  for (std::size_t c = 0; c < out.size(); ++c) out[c] = acc[c].result();
  return out;
}

// fl32(scale * (q . k)) for any order of the dot product.
Interval score_of(const std::vector<Interval>& q, const std::vector<Interval>& k, double scale) {
  Accumulator acc;
  for (std::size_t c = 0; c < q.size(); ++c) acc.add(q[c], k[c]);
  const Interval v = acc.result();
  if (scale == 1.0) return v;
  return bounds::float32_inside(std::nextafter(static_cast<float>(v.lo * scale), -kInf),
                                std::nextafter(static_cast<float>(v.hi * scale), kInf));
}

// The float32 numbers a computed float32 of a real in [lo, hi] can be (rounding outwards).
Interval f32_around(double lo, double hi) {
  auto below = [](double x) {
    auto f = static_cast<float>(x);
    if (static_cast<double>(f) > x) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    return static_cast<double>(f);
  };
  auto above = [](double x) {
    auto f = static_cast<float>(x);
    if (static_cast<double>(f) < x) f = std::nextafter(f, std::numeric_limits<float>::infinity());
    return static_cast<double>(f);
  };
  return {below(lo), above(hi)};
}

// One score of a select head at t: key s holding value v (-1: BOS's).
struct Entry {
  Interval score;
  int s = 0, v = -1;
};

}  // namespace

// The support condition, and the distinct values of the letter group the key reads.
KrCertifier::KeyValues KrCertifier::key_values(int l, const AttentionHead& h) const {
  for (int r : reads(h.query))
    if (written_[r] || letter_[r])
      refuse(l, h.name,
             "the query reads " + dimension_text(r) + ", which " +
                 (written_[r] ? "a layer writes" : "differs between letters") +
                 ": the score would not be a function of (t, s, v) alone");
  KeyValues kv;
  std::vector<int> letter_reads;
  for (int r : reads(h.key)) {
    if (written_[r])
      refuse(l, h.name,
             "the key reads " + dimension_text(r) +
                 ", which a layer writes (the walk's residues): its values come from the MLP "
                 "obligations, which are not built for kr networks",
             true);
    if (!letter_[r]) continue;
    std::string group = "letter dimensions";
    for (const ResidualSubspace& g : net_.subspaces)
      if (r >= g.first && r < g.first + g.width) group = g.name;
    if (!kv.group.empty() && group != kv.group)
      refuse(l, h.name,
             "the key reads two letter groups ('" + kv.group + "' and '" + group +
                 "'): the certifier takes at most one");
    kv.group = group;
    letter_reads.push_back(r);
  }
  std::map<std::vector<float>, int> seen;
  for (int a = 1; a < static_cast<int>(net_.token_embedding.rows()); ++a) {
    std::vector<float> key;
    for (int r : letter_reads) key.push_back(net_.token_embedding(a, r));
    if (seen.emplace(key, a).second) kv.tokens.push_back(a);
  }
  return kv;
}

void KrCertifier::select_head(int l, const AttentionHead& h, nlohmann::json& obligations) const {
  const KeyValues kv = key_values(l, h);
  const int nv = static_cast<int>(kv.tokens.size());
  const double scale = net_.attention_scale;
  std::vector<std::vector<Interval>> q(t_max_ + 1);
  std::vector<std::vector<std::vector<Interval>>> k(t_max_ + 1);
  for (int t = 0; t <= t_max_; ++t) {
    q[t] = project(residual(t == 0 ? 0 : 1, t), h.query);
    if (t == 0) k[t].push_back(project(residual(0, 0), h.key));
    for (int v = 0; t > 0 && v < nv; ++v) k[t].push_back(project(residual(kv.tokens[v], t), h.key));
  }
  auto value_name = [&](int v) {
    return v < 0 ? std::string("<bos>") : net_.vocabulary[kv.tokens[v]];
  };
  auto entry_text = [&](const Entry& e) {
    return "key s = " + std::to_string(e.s) +
           (e.v < 0 ? " (BOS)" : " holding '" + value_name(e.v) + "'s value") + " scores " +
           interval_text(e.score);
  };
  double min_gap = kInf, worst_leak = 0.0;
  nlohmann::json at = nullptr;
  long long pairs = 0;
  std::vector<Entry> entries, by_hi;
  std::vector<double> lse;
  for (int t = 0; t <= t_max_; ++t) {
    interruption_point();  // a row of (t + 1) |V| scores since the last
    entries.clear();
    for (int s = 0; s <= t; ++s)
      for (int v = 0; v < static_cast<int>(k[s].size()); ++v)
        entries.push_back({score_of(q[t], k[s][v], scale), s, s == 0 ? -1 : v});
    pairs += static_cast<long long>(entries.size());
    // Per key, the least score it can take (the lower ends); the two largest over the keys.
    // An (s, v) may be some word's argmax when its upper end reaches every other key's least.
    std::vector<double> least(t + 1, kInf);
    for (const Entry& e : entries) least[e.s] = std::min(least[e.s], e.score.lo);
    int top = 0;
    for (int s = 1; s <= t; ++s)
      if (least[s] > least[top]) top = s;
    double second = -kInf;
    for (int s = 0; s <= t; ++s)
      if (s != top) second = std::max(second, least[s]);
    auto can_win = [&](const Entry& e) { return e.score.hi >= (e.s == top ? second : least[top]); };
    // Scores of two keys that may be alike, one of them a possible argmax: refused.
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.score.lo < b.score.lo; });
    for (std::size_t i = 0; i < entries.size();) {
      std::size_t j = i + 1;
      double reach = entries[i].score.hi;
      while (j < entries.size() && entries[j].score.lo <= reach)
        reach = std::max(reach, entries[j].score.hi), ++j;
      for (std::size_t a = i; a < j; ++a)
        for (std::size_t b = i; b < j; ++b)
          if (entries[a].s != entries[b].s && can_win(entries[a]))
            refuse(l, h.name,
                   "at t = " + std::to_string(t) + " the " + entry_text(entries[a]) + " and the " +
                       entry_text(entries[b]) +
                       ": a word may give them the same score, so the selected key is not "
                       "unique");
      i = j;
    }
    // The leak: e^(score - score*) summed over every (s, v) scoring below the argmax.
    by_hi = entries;
    std::sort(by_hi.begin(), by_hi.end(),
              [](const Entry& a, const Entry& b) { return a.score.hi < b.score.hi; });
    lse.assign(by_hi.size(), -kInf);
    for (std::size_t i = 0; i < by_hi.size(); ++i) {
      const double prev = i ? lse[i - 1] : -kInf, x = by_hi[i].score.hi;
      const double m = std::max(prev, x);
      lse[i] = m + std::log1p(std::exp(-std::fabs(prev - x)));
    }
    for (const Entry& e : entries) {
      if (!can_win(e)) continue;
      const auto below = static_cast<std::size_t>(
          std::lower_bound(by_hi.begin(), by_hi.end(), e.score.lo,
                           [](const Entry& a, double x) { return a.score.hi < x; }) -
          by_hi.begin());
      if (below == 0) continue;
      // exp within 2 ulp, plus float32's least subnormal for each key.
      const double leak = std::exp(lse[below - 1] - e.score.lo) * (1.0 + 0x1p-20) +
                          static_cast<double>(below) * 0x1p-149;
      worst_leak = std::max(worst_leak, leak);
      for (std::size_t i = below; i-- > 0;) {
        if (by_hi[i].s == e.s) continue;
        const double gap = e.score.lo - by_hi[i].score.hi;
        if (gap < min_gap)
          min_gap = gap, at = {{"t", t},
                               {"s", e.s},
                               {"value", value_name(e.v)},
                               {"runner_up_s", by_hi[i].s},
                               {"runner_up_value", value_name(by_hi[i].v)}};
        break;
      }
    }
  }
  obligations.push_back({{"kind", "select"},
                         {"layer", l},
                         {"head", h.name},
                         {"key_group", kv.group},
                         {"key_values", nv},
                         {"scores", pairs},
                         {"min_gap", min_gap},
                         {"at", at},
                         {"leak", worst_leak}});
}

// A whole sum's values: BOS's 0, each letter's increment (its value through W_O over N + 1)
// an exact integer, the count's dimensions 0 before the head; per head dimension the running
// sum over s <= t of the largest |value| a letter gives (the bound eps(t) scales).
KrCertifier::WholeSum KrCertifier::whole_sum_values(int l, const AttentionHead& h) const {
  const int hd = static_cast<int>(h.value.cols());
  const double n1 = static_cast<double>(net_.max_len) + 1.0;  // letters weigh 1/(N + 1)
  // The value's classes: the letters' rows (the value reads no written dimension), BOS's 0.
  std::vector<int> written_by_head;
  for (int r = 0; r < h.output.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(h.output, r); it; ++it)
      if (it.value() != 0.0f && std::find(written_by_head.begin(), written_by_head.end(),
                                          it.col()) == written_by_head.end())
        written_by_head.push_back(it.col());
  std::vector<std::vector<double>> most(t_max_ + 1, std::vector<double>(hd, 0.0));
  nlohmann::json increments = nlohmann::json::object();
  std::vector<std::vector<long>> per_dim(written_by_head.size(),
                                         std::vector<long>(net_.vocabulary.size(), 0));
  for (int s = 0; s <= t_max_; ++s) {
    for (int a = (s == 0 ? 0 : 1); a < (s == 0 ? 1 : static_cast<int>(net_.vocabulary.size()));
         ++a) {
      const std::vector<Interval> x = project(residual(a, s), h.value);
      for (int c = 0; c < hd; ++c) {
        if (!x[c].is_point())
          refuse(l, h.name,
                 "the value of '" + net_.vocabulary[a] + "' at s = " + std::to_string(s) +
                     " is not exact in float32 (" + interval_text(x[c]) + ")");
        if (s == 0 && x[c].lo != 0.0)
          refuse(l, h.name,
                 "BOS's value is " + number(x[c].lo) + ", not 0: the count would not start at 0");
        most[s][c] = std::max(most[s][c], std::fabs(x[c].lo));
      }
      for (std::size_t wi = 0; wi < written_by_head.size(); ++wi) {
        const int r = written_by_head[wi];
        double u = 0.0;
        for (int c = 0; c < hd; ++c) u += x[c].lo * static_cast<double>(h.output.coeff(c, r));
        const double inc = u / n1;
        if (s > 0 && inc != std::nearbyint(inc))
          refuse(l, h.name,
                 "the increment of '" + net_.vocabulary[a] + "' to " + dimension_text(r) + " is " +
                     number(inc) + " (its value through the output, over N + 1 = " + number(n1) +
                     "), not an integer: the count would leave the integers");
        if (s == 1 && r == written_by_head.front()) increments[net_.vocabulary[a]] = inc;
        if (s == 1) per_dim[wi][a] = std::lround(inc);
        if (s > 1 && inc != static_cast<double>(per_dim[wi][a]))
          refuse(l, h.name,
                 "the increment of '" + net_.vocabulary[a] + "' to " + dimension_text(r) + " is " +
                     number(inc) + " at s = " + std::to_string(s) + " but " +
                     std::to_string(per_dim[wi][a]) + " at s = 1: not a function of the letter");
      }
    }
  }
  for (int r : written_by_head)
    for (int t = 0; t <= t_max_; ++t)
      if (residual(t == 0 ? 0 : 1, t)[r] != 0.0)
        refuse(l, h.name,
               "the count's " + dimension_text(r) + " holds " +
                   number(residual(t == 0 ? 0 : 1, t)[r]) +
                   " before the head at t = " + std::to_string(t) + ", not 0");
  WholeSum sum{written_by_head, {}, increments, per_dim};
  std::vector<std::vector<double>>& running = sum.running;
  running.assign(hd, std::vector<double>(t_max_ + 1, 0.0));
  for (int c = 0; c < hd; ++c)
    for (int s = 1; s <= t_max_; ++s) running[c][s] = running[c][s - 1] + most[s][c];
  return sum;
}

void KrCertifier::average_head(int l, const AttentionHead& h, nlohmann::json& obligations) {
  if (h.role.kind != RoleKind::CounterSum)
    refuse(l, h.name,
           "an average head that is not a kr counter's sum (role '" + describe(h.role) +
               "': the walk's block sums) is not built",
           true);
  const KeyValues kv = key_values(l, h);
  if (!kv.group.empty())
    refuse(l, h.name,
           "an average head's key reads the letter group '" + kv.group +
               "': its weights would depend on the word, not on (t, s) alone");
  for (int r : reads(h.value))
    if (written_[r])
      refuse(l, h.name,
             "the value reads " + dimension_text(r) +
                 ", which a layer writes (an increment from an MLP): its values come from the MLP "
                 "obligations, which are not built for kr networks",
             true);
  // Whole sums: every letter's key is the same vector at every s >= 1 (BOS's apart), so at
  // each t the letters weigh alike; windows, block and dyadic sums are not built.
  const std::vector<Interval> bos_key = project(residual(0, 0), h.key);
  const std::vector<Interval> letter_key = project(residual(1, std::min(1, t_max_)), h.key);
  for (int s = 1; s <= t_max_; ++s) {
    const std::vector<Interval> k = project(residual(1, s), h.key);
    for (std::size_t c = 0; c < k.size(); ++c)
      if (k[c].lo != letter_key[c].lo || k[c].hi != letter_key[c].hi)
        refuse(l, h.name,
               "the letters' keys differ between s = 1 and s = " + std::to_string(s) +
                   ": a window, block or dyadic sum, which is not built (only whole sums are)",
               true);
  }
  const WholeSum sum = whole_sum_values(l, h);
  const int hd = static_cast<int>(h.value.cols());
  const double n1 = static_cast<double>(net_.max_len) + 1.0;
  const std::vector<int>& written_by_head = sum.written;
  const std::vector<std::vector<double>>& running = sum.running;
  double worst = 0.0;
  int worst_t = 0;
  for (int t = 0; t <= t_max_; ++t) {
    interruption_point();  // two scores since the last
    const std::vector<Interval> q = project(residual(t == 0 ? 0 : 1, t), h.query);
    const Interval bos = score_of(q, bos_key, net_.attention_scale);
    const Interval letters = score_of(q, letter_key, net_.attention_scale);
    // Softmax with the row maximum subtracted: d = fl(score - max), exp within 2 ulp.
    const double m_lo = t ? std::max(bos.lo, letters.lo) : bos.lo;
    const double m_hi = t ? std::max(bos.hi, letters.hi) : bos.hi;
    auto weight_of = [&](Interval sc) {
      if (sc.is_point() && sc.lo == m_lo && m_lo == m_hi) return Interval::point(1.0);
      const Interval d = f32_around(sc.lo - m_hi, sc.hi - m_lo);
      return Interval{std::exp(d.lo) * (1.0 - 0x1p-21), std::exp(d.hi) * (1.0 + 0x1p-21)};
    };
    // The weight e/S, or e (1/S) (ATen's two roundings: the 2^-23 below covers the
    // reciprocal's), or the weighted sum divided by S at the end (flash kernels: the extra
    // 2^-23 of the output in eps covers the division).
    const Interval e0 = weight_of(bos), e1 = weight_of(letters);
    Accumulator sum;
    sum.add(1.0, e0);
    for (int s = 1; s <= t; ++s) sum.add(1.0, e1);
    const Interval total = sum.result();
    const Interval w1 =
        f32_around(e1.lo / total.hi * (1.0 - 0x1p-23), e1.hi / total.lo * (1.0 + 0x1p-23));
    const double delta = std::max(std::fabs(w1.lo - 1.0 / n1), std::fabs(w1.hi - 1.0 / n1));
    for (int r : written_by_head) {
      double eps = 0.0, out = 0.0;
      for (int c = 0; c < hd; ++c) {
        const double o = std::fabs(static_cast<double>(h.output.coeff(c, r)));
        if (o == 0.0) continue;
        const double err = running[c][t] * delta + gamma(t + 1.0) * w1.hi * running[c][t];
        eps += o * err;
        out += o * (w1.hi * running[c][t] + err);
      }
      eps = (eps + (gamma(hd) + 0x1p-23) * out) * (1.0 + 0x1p-40);
      if (eps > worst) worst = eps, worst_t = t;
      if (eps >= kCountTolerance)
        refuse(l, h.name,
               "at t = " + std::to_string(t) + " the count in " + dimension_text(r) +
                   " is within eps = " + number(eps) +
                   " of the integer sum of the increments (float32 in any order), not within "
                   "3/8, the combs' tolerance: the bound holds up to t = " +
                   std::to_string(t - 1) + " only (certify with --max-len " +
                   std::to_string(t - 1) +
                   ", or compile with --counting blocks, whose sums are exact)");
    }
  }
  for (std::size_t wi = 0; wi < written_by_head.size(); ++wi)
    counts_.push_back({l, written_by_head[wi], sum.per_dim[wi], worst});
  obligations.push_back({{"kind", "average"},
                         {"layer", l},
                         {"head", h.name},
                         {"weights", "whole"},
                         {"increments", sum.increments},
                         {"epsilon", {{"max", worst}, {"at_t", worst_t}}},
                         {"tolerance", kCountTolerance}});
}

}  // namespace krc::certify_detail
