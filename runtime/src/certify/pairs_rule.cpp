// The scan certifier's pairs rule (scan_certifier.hpp, obligations 4 and 5): each layer's MLP
// evaluated on every (fetched, current) pair of the windows' transformations, |domain|^2 a
// layer, the composed window's encoding checked against the one it had when first seen; then
// every prefix's logits. Any scan form; re-checked by tools/check_certificate.py.
#include <algorithm>
#include <limits>

#include "certify/certify_common.hpp"
#include "certify/scan_certifier.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::certify_detail {

namespace {

using bounds::Accumulator;
using bounds::Interval;

// Interval operations one layer's MLP enumeration may take (about a minute on one core): past it
// the certifier says so instead of running for hours (a 55-state protocol's monoid).
constexpr long long kMaxWork = 1'000'000'000;

// x then y: the letters of x come first (they are the earlier window).
Tau then(const Tau& x, const Tau& y) {
  Tau r(x.size());
  for (std::size_t q = 0; q < x.size(); ++q) r[q] = y[x[q]];
  return r;
}

}  // namespace

void ScanCertifier::layer(int l, nlohmann::json& obligations) {
  const AttentionHead& h = net_.layers[l].heads[0];
  nlohmann::json select = {{"kind", "select"}, {"layer", l}, {"head", h.name}};
  auto [p, others] = fetch_weights(l, select);
  obligations.push_back(select);
  const std::vector<double> bound = value_bound(l);
  // The static values the MLP reads, over t >= 1 (t = 0 is BOS's, below).
  const Mlp& m = *net_.layers[l].mlp;
  const std::map<std::vector<double>, int> patterns =
      static_patterns(static_reads(m), l, part_name(m));
  check_pair_cost(l, patterns.size());
  std::vector<std::pair<Tau, Vec>> fetches;  // BOS's identity first, then every window
  fetches.emplace_back(identity_, fetched(l, bos_, p, others, bound));
  for (const auto& [tau, v] : domain_) {
    interruption_point();
    fetches.emplace_back(tau, fetched(l, v, p, others, bound));
  }
  std::map<Tau, Vec> next = compose_windows(l, fetches, patterns);
  // BOS: t = 0 fetches itself and composes identity with identity.
  Vec bos_next = residual_after(l, 0, bos_, fetches.front().second);
  const bool last = l + 1 == static_cast<int>(net_.layers.size());
  if (!last) {
    check_encoding(l, identity_, bos_next, "BOS (t = 0)");
    for (const auto& [tau, v] : next) check_encoding(l, tau, v, "the window " + tau_text(a_, tau));
  }
  const long long pairs = static_cast<long long>(domain_.size() + 1) * domain_.size();
  bos_ = bos_next;
  domain_ = std::move(next);
  obligations.push_back({{"kind", "mlp"},
                         {"layer", l},
                         {"blocks", m.blocks.size()},
                         {"block", part_name(m)},
                         {"pairs", pairs},
                         {"static_patterns", patterns.size()},
                         {"domain_after", domain_.size()},
                         {"encoding_checked", !last}});
  record_domain(l);
}

// Past the domain or work limit the rule is undecided (no obligation failed).
void ScanCertifier::check_pair_cost(int l, std::size_t patterns) const {
  const Mlp& m = *net_.layers[l].mlp;
  const long long pairs = static_cast<long long>(domain_.size() + 1) * domain_.size();
  const std::string instead =
      " (the selector rule, --rule selector, covers binary coordinates; the integer form's is "
      "not built)";
  if (static_cast<long long>(domain_.size()) > max_domain_)
    refuse(l, part_name(m),
           "the windows reach " + std::to_string(domain_.size()) +
               " transformations, past the enumeration limit " + std::to_string(max_domain_) +
               instead,
           true);
  const long long work = pairs * static_cast<long long>(patterns) *
                         (m.in_weight.nonZeros() + m.out_weight.nonZeros() + m.hidden());
  if (work > kMaxWork)
    refuse(l, part_name(m),
           "evaluating the MLP on every (fetched, current) pair of the " +
               std::to_string(domain_.size()) + " window transformations costs " +
               std::to_string(work) + " interval operations, past the limit " +
               std::to_string(kMaxWork) + instead,
           true);
}

// Every window x fetched (BOS's identity included) then every current window y: the window
// x;y's encoding after the MLP, joined over the pairs and static patterns that give it.
std::map<Tau, Vec> ScanCertifier::compose_windows(
    int l, const std::vector<std::pair<Tau, Vec>>& fetches,
    const std::map<std::vector<double>, int>& patterns) const {
  std::map<Tau, Vec> next;
  for (const auto& [xt, add] : fetches)
    for (const auto& [yt, y] : domain_) {
      interruption_point();  // one residual per pattern since the last
      const Tau tau = then(xt, yt);
      for (const auto& [key, t] : patterns) {
        Vec out = residual_after(l, t, y, add);
        auto [it, fresh] = next.emplace(tau, out);
        if (!fresh) it->second = joined(it->second, out);
      }
    }
  return next;
}

// The window part after layer l at position t: the current window `y`, plus what the head
// added, through the MLP (static dimensions cleared).
Vec ScanCertifier::residual_after(int l, int t, const Vec& y, const Vec& add) const {
  Vec in(d_);
  for (int c = 0; c < d_; ++c)
    in[c] = static_[c] ? static_at_[t][c] : add_rounded(y[c], add[c], format_);
  Vec out = mlp(l, in);
  for (int c = 0; c < d_; ++c)
    if (static_[c]) out[c] = Interval{};
  return out;
}

// The largest |v_c| any key holds, over every window's encoding and BOS's.
std::vector<double> ScanCertifier::value_bound(int l) const {
  const AttentionHead& h = net_.layers[l].heads[0];
  std::vector<double> bound(h.value.cols(), 0.0);
  auto include = [&](const Vec& x) {
    std::vector<Accumulator> acc(h.value.cols());
    for (int r = 0; r < h.value.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(h.value, r); it; ++it)
        acc[it.col()].add(it.value(), x[r]);
    for (std::size_t c = 0; c < bound.size(); ++c)
      bound[c] = std::max(bound[c], bounds::store(format_, acc[c].result()).magnitude());
  };
  include(bos_);
  for (const auto& [tau, v] : domain_) include(v);
  return bound;
}

// The residual after layer l's MLP, for the pre-MLP residual `in` (static part included).
Vec ScanCertifier::mlp(int l, const Vec& in) const {
  const Mlp& m = *net_.layers[l].mlp;
  Vec hidden(m.hidden());
  for (int u = 0; u < m.hidden(); ++u) {
    Accumulator acc;
    for (SparseMatrix::InnerIterator it(m.in_weight, u); it; ++it)
      acc.add(it.value(), in[it.col()]);
    hidden[u] = bounds::relu(mlp_sum(acc, m.in_bias[u], format_));
  }
  Vec out = in;
  for (int r = 0; r < d_; ++r) {
    if (static_[r]) continue;
    Accumulator acc;
    for (SparseMatrix::InnerIterator it(m.out_weight, r); it; ++it)
      acc.add(it.value(), hidden[it.col()]);
    out[r] = add_rounded(in[r], mlp_sum(acc, m.out_bias[r], format_), format_);
  }
  return out;
}

// The encoding of a window must be what it was when that transformation was first seen
// (the letters' at the embedding): a layer that changes it by more than the leaks has not
// composed exactly, which names the layer that broke, not the unembedding downstream.
void ScanCertifier::check_encoding(int l, const Tau& tau, const Vec& v, const std::string& what) {
  auto [it, fresh] = reference_.emplace(tau, v);
  const Vec& ref = it->second;
  for (int c = 0; c < d_; ++c) {
    if (static_[c]) continue;
    const Interval r = fresh ? Interval::point(0.5 * (v[c].lo + v[c].hi)) : ref[c];
    if (v[c].lo < r.lo - kDrift || v[c].hi > r.hi + kDrift)
      refuse(l, block_writing(l, c),
             "after composing, '" + net_.residual_labels[c] + "' of " + what + " is " +
                 interval_text(v[c]) +
                 (fresh ? ", not one value: the compose is not exact"
                        : " where its encoding is " + interval_text(r)));
  }
}

std::string ScanCertifier::block_writing(int l, int dim) const {
  const Mlp& m = *net_.layers[l].mlp;
  for (SparseMatrix::InnerIterator it(m.out_weight, dim); it; ++it)
    for (const MlpBlock& b : m.blocks)
      if (it.col() >= b.first && it.col() < b.first + b.count) return b.name;
  return net_.layers[l].heads[0].name;
}

// Every prefix's answer (its window's image of the initial state) above every other logit.
void ScanCertifier::unembedding(nlohmann::json& obligations) {
  const int layers = static_cast<int>(net_.layers.size());
  margin_ = std::numeric_limits<double>::infinity();
  std::string at;
  auto check = [&](const Tau& tau, Vec x, int t, const std::string& what) {
    interruption_point();  // one prefix's logits since the last
    for (int c = 0; c < d_; ++c)
      if (static_[c]) x[c] = static_at_[t][c];
    const int answer = static_cast<int>(tau[a_.initial()]);
    check_answer(x, answer, what,
                 "after " + what + " the logit of the answer " + a_.state_name(answer) + " is ",
                 at);
  };
  check(identity_, bos_, 0, "the empty word (t = 0)");
  for (const auto& [key, t] : static_patterns(unembedding_reads(), layers, "unembedding"))
    for (const auto& [tau, v] : domain_) check(tau, v, t, "the prefix " + tau_text(a_, tau));
  obligations.push_back({{"kind", "unembedding"},
                         {"layer", layers},
                         {"margin", margin_},
                         {"at", at},
                         {"prefixes", domain_.size() + 1}});
}

}  // namespace krc::certify_detail
