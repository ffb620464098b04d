// The scan certifier's selector rule (scan_certifier.hpp; the bit checks in selector_rule.cpp),
// for networks in binary coordinates: the invariant is per state slot, not per window
// transformation. Each prefix bit holds a value set per class ([0]: the bit is -1, [1]: +1),
// every other written dimension one interval; a layer's head is bounded on the hull of them,
// the fetched slot q per state s it may name, and the MLP proved bit by bit (slot_compose).
#include <limits>

#include "certify/certify_common.hpp"
#include "certify/scan_certifier.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::certify_detail {

using bounds::Accumulator;
using bounds::Interval;

// Every letter's slot q holds exactly the code of its image of q, BOS's the code of q; a
// prefix bit's value set is then {-1, +1}, every other written dimension one interval.
void ScanCertifier::slot_sets_from_embedding() {
  const SlotLayout& sl = *slots_;
  auto check_codes = [&](const Vec& v, const Tau& tau, const std::string& what) {
    for (int q = 0; q < sl.n; ++q)
      for (int i = 0; i < sl.b; ++i) {
        const Interval x = v[sl.prefix_dim(q, i)];
        const double want = code_bit(static_cast<int>(tau[q]), i);
        if (x.lo != want || x.hi != want)
          refuse(-1, "embedding",
                 "'" + net_.residual_labels[sl.prefix_dim(q, i)] + "' of " + what + " is " +
                     interval_text(x) + ", not " + number(want) + " (bit " + std::to_string(i) +
                     " of the code of " + a_.state_name(tau[q]) + ")");
      }
  };
  check_codes(bos_, identity_, "BOS");
  for (const auto& [tau, v] : domain_) check_codes(v, tau, "the letter " + tau_text(a_, tau));
  sets_.assign(d_, {});
  for (int c = 0; c < d_; ++c) {
    if (static_[c]) continue;
    const int f = c - sl.prefix;
    if (f >= 0 && f < sl.n * sl.b) {
      sets_[c] = {Interval::point(-1.0), Interval::point(1.0)};
      continue;
    }
    Interval h = bos_[c];
    for (const auto& [tau, v] : domain_) h = bounds::hull(h, v[c]);
    sets_[c] = {h};
  }
}

// The largest |v_c| any key holds when its residual lies in `x`.
std::vector<double> ScanCertifier::value_bound_of(int l, const Vec& x) const {
  const AttentionHead& h = net_.layers[l].heads[0];
  std::vector<Accumulator> acc(h.value.cols());
  for (int r = 0; r < h.value.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(h.value, r); it; ++it) acc[it.col()].add(it.value(), x[r]);
  std::vector<double> bound(h.value.cols(), 0.0);
  for (std::size_t c = 0; c < bound.size(); ++c)
    bound[c] = bounds::store(format_, acc[c].result()).magnitude();
  return bound;
}

Vec ScanCertifier::hull_residual() const {
  Vec x(d_);
  for (int c = 0; c < d_; ++c)
    if (!static_[c]) x[c] = hull_of(sets_[c]);
  return x;
}

// The static patterns `part` reads over t = 0..T, as full-width vectors.
std::vector<Vec> ScanCertifier::patterns_read(const std::vector<int>& read, int layer,
                                              const std::string& part) const {
  std::vector<Vec> out;
  for (const auto& [key, t] : static_patterns(read, layer, part, 0)) {
    Vec v(d_);
    for (int c = 0; c < d_; ++c)
      if (static_[c]) v[c] = static_at_[t][c];
    out.push_back(v);
  }
  return out;
}

// The residual before layer l's MLP: every set plus what the head adds on the hull, and the
// fetched slot q per state s the key's slot q names (the key's other slots: any code).
PreMlp ScanCertifier::pre_mlp(int l, Interval p, double others) const {
  const SlotLayout& sl = *slots_;
  const Vec hull = hull_residual();
  const std::vector<double> bound = value_bound_of(l, hull);
  const Vec added = fetched(l, hull, p, others, bound);
  PreMlp pre;
  pre.sets.assign(d_, {});
  for (int c = 0; c < d_; ++c)
    for (const Interval& v : sets_[c]) pre.sets[c].push_back(add_rounded(v, added[c], format_));
  pre.selector.assign(sl.n, std::vector<Vec>(sl.n, Vec(sl.b)));
  for (int q = 0; q < sl.n; ++q) {
    interruption_point();  // n fetches since the last
    for (int s = 0; s < sl.n; ++s) {
      Vec x = hull;
      for (int i = 0; i < sl.b; ++i)
        x[sl.prefix_dim(q, i)] = sets_[sl.prefix_dim(q, i)][code_bit(s, i) > 0];
      const Vec o = fetched(l, x, p, others, bound);
      for (int i = 0; i < sl.b; ++i) {
        const int f = sl.fetched_dim(q, i);
        pre.selector[q][s][i] = add_rounded(hull[f], o[f], format_);
        pre.sets[f] = {s ? bounds::hull(pre.sets[f][0], pre.selector[q][s][i])
                         : pre.selector[q][s][i]};
      }
    }
  }
  const Mlp& m = *net_.layers[l].mlp;
  pre.patterns = patterns_read(static_reads(m), l, part_name(m));
  return pre;
}

void ScanCertifier::selector_layer(int l, nlohmann::json& obligations) {
  const SlotLayout& sl = *slots_;
  const AttentionHead& h = net_.layers[l].heads[0];
  nlohmann::json select = {{"kind", "select"}, {"layer", l}, {"head", h.name}};
  auto [p, others] = fetch_weights(l, select);
  obligations.push_back(select);
  const PreMlp pre = pre_mlp(l, p, others);
  const bool last = l + 1 == static_cast<int>(net_.layers.size());
  std::vector<int> composed;
  for (int q = 0; q < sl.n; ++q)
    if (!last || q == static_cast<int>(a_.initial())) composed.push_back(q);
  auto outcome = slot_compose(net_, format_, static_, sl, pre, l, composed, !last);
  sets_ = std::move(outcome.sets);
  obligations.push_back(outcome.obligation);
  invariant_.push_back(
      {{"after_layer", l},
       {"slots", last ? "the initial state's slot holds the code of the state after the prefix"
                      : "slot q holds the code of f(q), f the window's transformation; the "
                        "fetched copy holds 0"}});
}

// For every static pattern and every state the initial state's slot may name, that state's
// logit above every other.
void ScanCertifier::selector_unembedding(nlohmann::json& obligations) {
  const SlotLayout& sl = *slots_;
  const int layers = static_cast<int>(net_.layers.size());
  const int q0 = static_cast<int>(a_.initial());
  margin_ = std::numeric_limits<double>::infinity();
  std::string at;
  const Vec hull = hull_residual();
  for (const Vec& pattern : patterns_read(unembedding_reads(), layers, "unembedding"))
    for (int answer = 0; answer < sl.n; ++answer) {
      Vec x = hull;
      for (int c = 0; c < d_; ++c)
        if (static_[c]) x[c] = pattern[c];
      for (int i = 0; i < sl.b; ++i)
        x[sl.prefix_dim(q0, i)] = sets_[sl.prefix_dim(q0, i)][code_bit(answer, i) > 0];
      check_answer(
          x, answer, "a prefix that ends in " + a_.state_name(answer),
          "when the initial state's slot names " + a_.state_name(answer) + ", its logit is ", at);
    }
  obligations.push_back({{"kind", "unembedding"},
                         {"layer", layers},
                         {"margin", margin_},
                         {"at", at},
                         {"prefixes", sl.n}});
}

}  // namespace krc::certify_detail
