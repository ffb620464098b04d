// The certifier of scan networks (compiler/certify.md, obligations 1, 2, 4, 5, 6).
//
// The invariant, checked layer by layer: after layer l, position t's residual is
//   static(t) + E_l(tau)
// where static(t) lives on the dimensions no head or MLP writes (the position codes, the
// constant, bos: a function of t alone, bounded for every t = 0..T), and E_l(tau) lives on the
// rest (the scan's slots) and depends only on tau, the transformation of the letters in the
// window (max(t - 2^(l+1), 0), t] the scan has composed so far (at t = 0: the identity, held
// by BOS, tracked apart). E_l is a table of intervals over the transformations reachable as
// such windows: the letters at the embedding, then every x;y with x a window (or BOS's
// identity) and y a window, a superset of what occurs. Every bound holds for every t, so the
// cost is |domain|^2 evaluations of each MLP and T^2/2 scores per head, never |letters|^T.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "certify/certify_common.hpp"
#include "certify/interval.hpp"
#include "certify/selector_rule.hpp"
#include "krc/automata/interrupt.hpp"
#include "krc/runtime/certify.hpp"

namespace krc {

namespace {

using bounds::Accumulator;
using bounds::Format;
using bounds::Interval;
using Vec = std::vector<Interval>;
using Tau = std::vector<StateId>;
using certify_detail::add_rounded;
using certify_detail::interval_text;
using certify_detail::number;
using certify_detail::refuse;
using certify_detail::Refused;

// Past this much of a change to an encoding, the layer has not reproduced it: far above the
// softmax's leaks (about T e^-40 per layer) and far below one ulp of any value it holds.
constexpr double kDrift = 0x1p-30;
// Static patterns an MLP may read (distinct values of the static dimensions it reads over
// t >= 1): the scan's read the constant only; more would multiply the enumeration.
constexpr std::size_t kMaxPatterns = 16;
// Interval operations one layer's MLP enumeration may take (about a minute on one core): past it
// the certifier says so instead of running for hours (a 55-state protocol's monoid).
constexpr long long kMaxWork = 1'000'000'000;

std::string tau_text(const Automaton& a, const Tau& tau) {
  std::string s = "(";
  for (std::size_t q = 0; q < tau.size(); ++q) {
    if (q) s += " ";
    s += a.state_name(q) + "->" + a.state_name(tau[q]);
  }
  return s + ")";
}

// x then y: the letters of x come first (they are the earlier window).
Tau then(const Tau& x, const Tau& y) {
  Tau r(x.size());
  for (std::size_t q = 0; q < x.size(); ++q) r[q] = y[x[q]];
  return r;
}

void round_matrix(SparseMatrix& m, Format f) {
  for (int k = 0; k < m.nonZeros(); ++k)
    m.valuePtr()[k] = static_cast<float>(bounds::round_to(f, m.valuePtr()[k]));
}

template <class Dense>
void round_dense(Dense& m, Format f) {
  for (Eigen::Index k = 0; k < m.size(); ++k)
    m.data()[k] = static_cast<float>(bounds::round_to(f, m.data()[k]));
}

// The network as the arithmetic holds it: every weight rounded once (runtime/README.md,
// "bf16 and fp16"); float32 leaves it unchanged.
Network rounded(const Network& n, Format f) {
  Network r = n;
  if (f == Format::Float32) return r;
  round_dense(r.token_embedding, f);
  round_dense(r.position_embedding, f);
  round_matrix(r.unembedding, f);
  for (Layer& layer : r.layers) {
    for (AttentionHead& h : layer.heads) {
      round_matrix(h.query, f);
      round_matrix(h.key, f);
      round_matrix(h.value, f);
      round_matrix(h.output, f);
    }
    if (layer.mlp) {
      round_matrix(layer.mlp->in_weight, f);
      round_matrix(layer.mlp->out_weight, f);
      round_dense(layer.mlp->in_bias, f);
      round_dense(layer.mlp->out_bias, f);
    }
  }
  r.attention_scale = static_cast<float>(bounds::round_to(f, r.attention_scale));
  return r;
}

class ScanCertifier {
 public:
  ScanCertifier(const Network& network, const Automaton& automaton, const CertifyOptions& o)
      : original_(network),
        a_(automaton),
        arithmetic_(o.arithmetic),
        format_(bounds::format_of(o.arithmetic)),
        max_domain_(o.max_domain),
        selector_(o.rule == CertifyRule::Selector),
        net_(rounded(network, format_)) {
    t_max_ = o.max_len.value_or(network.max_len);
    d_ = net_.d_model();
  }

  CertifyResult run() {
    CertifyResult result;
    nlohmann::json& c = result.certificate;
    c["claim"] = {{"max_len", t_max_},
                  {"arithmetic", krc::to_string(arithmetic_)},
                  {"summation", "any order"},
                  {"automaton", a_.name()},
                  {"states", a_.state_count()},
                  {"statement",
                   "for every word of length <= max_len and every position t, the "
                   "argmax of the logits is the automaton's state after t letters"}};
    c["assumptions"] = {"round to nearest, ties to even", "exp(x) within 2 ulp of e^x, exp(0) = 1",
                        "no TF32 (float32 products of float32 factors)",
                        "fused multiply-adds allowed (the bounds hold for any summation order)"};
    c["claim"]["rule"] = selector_ ? "selector" : "pairs";
    c["obligations"] = nlohmann::json::array();
    try {
      check_shape();
      if (selector_) {
        slots_ = certify_detail::binary_slots(net_, a_);
        if (!slots_)
          throw std::invalid_argument(
              "the selector rule covers binary-coordinate scans of the automaton's states "
              "(compiled with --precision bf16 or fp16 where that form is the smaller); this "
              "network's scan is in another form: use --rule pairs");
      }
      embedding(c["obligations"]);
      if (selector_) slot_sets_from_embedding();
      for (int l = 0; l < static_cast<int>(net_.layers.size()); ++l)
        selector_ ? selector_layer(l, c["obligations"]) : layer(l, c["obligations"]);
      selector_ ? selector_unembedding(c["obligations"]) : unembedding(c["obligations"]);
      c["claim"]["margin"] = margin_;
    } catch (const Refused& r) {
      result.refusal = r.refusal;
    }
    c["invariant"] = invariant_;
    return result;
  }

 private:
  void check_shape() {
    const std::string strategy = original_.compiler.value("strategy", std::string());
    if (strategy != "scan")
      throw std::invalid_argument("certify covers scan networks only (this file's strategy is '" +
                                  (strategy.empty() ? std::string("unknown") : strategy) +
                                  "'); kr, onelayer and exports are not built yet");
    if (net_.states != a_.states())
      throw std::invalid_argument(
          "the network's logits are not the automaton's states (an output kind): not covered yet");
    if (t_max_ < 0 || t_max_ > net_.max_len)
      throw std::invalid_argument("--max-len " + std::to_string(t_max_) +
                                  " is past the network's max_len " + std::to_string(net_.max_len) +
                                  " (no position row for it)");
    if (!(net_.attention_scale > 0.0f))
      throw std::invalid_argument("attention scale " + number(net_.attention_scale) +
                                  " is not positive");
    const int layers = static_cast<int>(net_.layers.size());
    if (layers < 31 && (1LL << layers) < t_max_)
      refuse(layers, "scan",
             std::to_string(layers) + " steps compose windows of 2^" + std::to_string(layers) +
                 " = " + std::to_string(1LL << layers) + " letters, fewer than max-len " +
                 std::to_string(t_max_));
    for (int l = 0; l < layers; ++l) {
      const Layer& layer = net_.layers[l];
      if (layer.heads.size() != 1 || layer.heads[0].kind != HeadKind::Select ||
          layer.heads[0].role.kind != RoleKind::ScanFetch || layer.heads[0].role.step != l + 1 ||
          !layer.mlp)
        throw std::invalid_argument("layer " + std::to_string(l) +
                                    " is not a scan step (one select head 'scan fetch' of step " +
                                    std::to_string(l + 1) + " and an MLP)");
    }
    // Static dimensions: written by no head and no MLP.
    static_.assign(d_, 1);
    for (const Layer& layer : net_.layers) {
      for (const AttentionHead& h : layer.heads)
        for (int r = 0; r < h.output.outerSize(); ++r)
          for (SparseMatrix::InnerIterator it(h.output, r); it; ++it)
            if (it.value() != 0.0f) static_[it.col()] = 0;
      for (int r = 0; r < layer.mlp->out_weight.outerSize(); ++r)
        for (SparseMatrix::InnerIterator it(layer.mlp->out_weight, r); it; ++it)
          if (it.value() != 0.0f) static_[r] = 0;
      for (int r = 0; r < d_; ++r)
        if (layer.mlp->out_bias[r] != 0.0f) static_[r] = 0;
    }
    auto reads = [&](const SparseMatrix& m, bool want_static, int layer, const std::string& part,
                     const char* what) {
      for (int r = 0; r < m.outerSize(); ++r)
        for (SparseMatrix::InnerIterator it(m, r); it; ++it)
          if (it.value() != 0.0f && static_cast<bool>(static_[r]) != want_static)
            refuse(layer, part,
                   std::string(what) + " reads residual dimension " + std::to_string(r) + " '" +
                       net_.residual_labels[r] + "', which is " +
                       (want_static ? "written by a layer" : "a function of the position") +
                       ": the score would not be a function of (t, s) alone, or the fetched "
                       "value not a function of the window");
    };
    for (int l = 0; l < layers; ++l) {
      const AttentionHead& h = net_.layers[l].heads[0];
      reads(h.query, true, l, h.name, "the query");
      reads(h.key, true, l, h.name, "the key");
      reads(h.value, false, l, h.name, "the value");
    }
  }

  void embedding(nlohmann::json& obligations) {
    static_at_.assign(t_max_ + 1, Vec(d_));
    for (int t = 0; t <= t_max_; ++t) {
      const int token = 0;  // the static part must not depend on the letter: checked below
      for (int c = 0; c < d_; ++c) {
        if (!static_[c]) {
          if (net_.position_embedding(t, c) != 0.0f)
            refuse(-1, "embedding",
                   "the position embedding of t = " + std::to_string(t) + " writes " +
                       number(net_.position_embedding(t, c)) + " to '" + net_.residual_labels[c] +
                       "', a dimension the layers write: it would not be a function of the window");
          continue;
        }
        Accumulator acc;
        acc.add_constant(net_.token_embedding(token, c));
        acc.add_constant(net_.position_embedding(t, c));
        static_at_[t][c] = bounds::store(format_, acc.result());
      }
    }
    for (int c = 0; c < d_; ++c) {
      if (!static_[c]) continue;
      for (int a = 1; a < net_.token_embedding.rows(); ++a)
        if (net_.token_embedding(a, c) != net_.token_embedding(1, c))
          refuse(-1, "embedding",
                 "the letters' embeddings differ on '" + net_.residual_labels[c] +
                     "', a dimension no layer writes (a position code): the position part would "
                     "depend on the letter");
    }
    // t >= 1 holds a letter: the static part is the letter's (all equal), not BOS's.
    if (net_.token_embedding.rows() > 1)
      for (int t = 1; t <= t_max_; ++t)
        for (int c = 0; c < d_; ++c)
          if (static_[c]) {
            Accumulator acc;
            acc.add_constant(net_.token_embedding(1, c));
            acc.add_constant(net_.position_embedding(t, c));
            static_at_[t][c] = bounds::store(format_, acc.result());
          }
    auto data_of = [&](int token) {
      Vec v(d_);
      for (int c = 0; c < d_; ++c)
        if (!static_[c])
          v[c] = bounds::store(format_, Interval::point(net_.token_embedding(token, c)));
      return v;
    };
    bos_ = data_of(0);
    Tau id(a_.state_count());
    for (std::size_t q = 0; q < id.size(); ++q) id[q] = static_cast<StateId>(q);
    identity_ = id;
    for (std::size_t letter = 0; letter < a_.letter_count(); ++letter) {
      const Tau& tau = a_.letter_action(letter);
      Vec v = data_of(static_cast<int>(letter) + 1);
      auto [it, fresh] = domain_.emplace(tau, v);
      if (!fresh) it->second = joined(it->second, v);
      reference_.emplace(tau, it->second);
    }
    reference_.emplace(identity_, bos_);
    long long data_dims = std::count(static_.begin(), static_.end(), 0);
    obligations.push_back({{"kind", "embedding"},
                           {"positions", t_max_ + 1},
                           {"tokens", net_.token_embedding.rows()},
                           {"static_dims", d_ - data_dims},
                           {"window_dims", data_dims},
                           {"domain", domain_.size()}});
    record_domain(-1);
  }

  static Vec joined(const Vec& a, const Vec& b) {
    Vec r(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) r[i] = bounds::hull(a[i], b[i]);
    return r;
  }

  void record_domain(int layer) {
    nlohmann::json taus = nlohmann::json::array();
    for (const auto& [tau, v] : domain_) taus.push_back(tau);
    invariant_.push_back(
        {{"after_layer", layer}, {"domain_size", domain_.size()}, {"domain", taus}});
  }

  // The fetch head of layer l: for every t the target max(t - 2^l, 0) must outscore every
  // other key, and the others' weights together bound the leak. Returns the target's weight
  // and the bound on the others' total weight, both over every t.
  std::pair<Interval, double> fetch_weights(int l, nlohmann::json& obligation) {
    const AttentionHead& h = net_.layers[l].heads[0];
    const int hd = static_cast<int>(h.query.cols());
    auto project = [&](const SparseMatrix& m, int t) {
      std::vector<Accumulator> acc(hd);
      for (int r = 0; r < m.outerSize(); ++r)
        for (SparseMatrix::InnerIterator it(m, r); it; ++it)
          acc[it.col()].add(it.value(), static_at_[t][r]);
      Vec out(hd);
      for (int c = 0; c < hd; ++c) out[c] = bounds::store(format_, acc[c].result());
      return out;
    };
    std::vector<Vec> q(t_max_ + 1), k(t_max_ + 1);
    for (int t = 0; t <= t_max_; ++t) {
      q[t] = project(h.query, t);
      k[t] = project(h.key, t);
    }
    const double scale = net_.attention_scale;
    auto score = [&](int t, int s) {
      Accumulator acc;
      for (int c = 0; c < hd; ++c) acc.add(q[t][c], k[s][c]);
      Interval v = bounds::store(format_, acc.result());
      if (scale != 1.0) {
        v = bounds::float32_inside(static_cast<float>(v.lo * scale),
                                   static_cast<float>(v.hi * scale));
        v = bounds::store(format_, v);
      }
      return v;
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
                     interval_text(row[s]) +
                     ", not below the target s = " + std::to_string(target) + "'s " +
                     interval_text(row[target]) + ": the fetch may take the wrong position");
        // exp of fl32(s - m) <= e^(gap bound), within 2 ulp; plus float32's least subnormal.
        leak += std::exp(-gap) * (1.0 + 0x1p-20) + 0x1p-149;
      }
      worst_leak = std::max(worst_leak, leak);
    }
    // The weights' float32 sum is 1 (the target's exp(0)) plus at most 2 leak: it rounds to 1
    // when that is below half an ulp; the target's weight R(1/S) follows (monotone).
    const double sum_hi = 1.0 + 2.0 * worst_leak * (1.0 + 0x1p-10);
    const double s_hi = bounds::float32_inside(1.0, sum_hi).hi;
    Interval p =
        bounds::store(format_, bounds::float32_inside(std::nextafter(1.0 / s_hi, 0.0), 1.0));
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
  Vec fetched(int l, const Vec& x, Interval p, double others, const std::vector<double>& bound) {
    const AttentionHead& h = net_.layers[l].heads[0];
    const int hd = static_cast<int>(h.value.cols());
    std::vector<Accumulator> acc(hd);
    for (int r = 0; r < h.value.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(h.value, r); it; ++it)
        acc[it.col()].add(it.value(), x[r]);
    Vec z(hd);
    for (int c = 0; c < hd; ++c) {
      const Interval v = bounds::store(format_, acc[c].result());
      z[c] = bounds::store(format_, bounds::dominated_sum(p, v, others * bound[c], t_max_ + 1));
    }
    std::vector<Accumulator> out(d_);
    for (int c = 0; c < h.output.outerSize(); ++c)
      for (SparseMatrix::InnerIterator it(h.output, c); it; ++it)
        out[it.col()].add(it.value(), z[c]);
    Vec o(d_);
    for (int r = 0; r < d_; ++r) o[r] = bounds::store(format_, out[r].result());
    return o;
  }

  // The largest |v_c| any key holds, over every window's encoding and BOS's.
  std::vector<double> value_bound(int l) {
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
  Vec mlp(int l, const Vec& in) const {
    const Mlp& m = *net_.layers[l].mlp;
    Vec hidden(m.hidden());
    for (int u = 0; u < m.hidden(); ++u) {
      Accumulator acc;
      for (SparseMatrix::InnerIterator it(m.in_weight, u); it; ++it)
        acc.add(it.value(), in[it.col()]);
      hidden[u] = bounds::relu(certify_detail::mlp_sum(acc, m.in_bias[u], format_));
    }
    Vec out = in;
    for (int r = 0; r < d_; ++r) {
      if (static_[r]) continue;
      Accumulator acc;
      for (SparseMatrix::InnerIterator it(m.out_weight, r); it; ++it)
        acc.add(it.value(), hidden[it.col()]);
      out[r] = add_rounded(in[r], certify_detail::mlp_sum(acc, m.out_bias[r], format_), format_);
    }
    return out;
  }

  // The distinct values the static dimensions `read` take over t >= from (1: the letters'
  // positions; 0: BOS's too), each with a t that has them: a part that reads the constant
  // feature sees one; one that reads the position, T.
  std::map<std::vector<double>, int> static_patterns(const std::vector<int>& read, int layer,
                                                     const std::string& part, int from = 1) const {
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

  void layer(int l, nlohmann::json& obligations) {
    const AttentionHead& h = net_.layers[l].heads[0];
    nlohmann::json select = {{"kind", "select"}, {"layer", l}, {"head", h.name}};
    auto [p, others] = fetch_weights(l, select);
    obligations.push_back(select);
    const std::vector<double> bound = value_bound(l);

    // The static values the MLP reads, over t >= 1 and at t = 0.
    const Mlp& m = *net_.layers[l].mlp;
    std::vector<int> static_read;
    {
      std::vector<char> seen(d_, 0);
      for (int u = 0; u < m.in_weight.outerSize(); ++u)
        for (SparseMatrix::InnerIterator it(m.in_weight, u); it; ++it)
          if (static_[it.col()] && !seen[it.col()])
            seen[it.col()] = 1, static_read.push_back(it.col());
    }
    const std::map<std::vector<double>, int> patterns =
        static_patterns(static_read, l, m.blocks.empty() ? "mlp" : m.blocks.front().name);

    const long long pairs = static_cast<long long>(domain_.size() + 1) * domain_.size();
    if (static_cast<long long>(domain_.size()) > max_domain_)
      refuse(l, m.blocks.empty() ? "mlp" : m.blocks.front().name,
             "the windows reach " + std::to_string(domain_.size()) +
                 " transformations, past the enumeration limit " + std::to_string(max_domain_) +
                 " (the selector rule, --rule selector, covers binary coordinates; the integer "
                 "form's is not built)",
             true);
    const long long work = pairs * static_cast<long long>(patterns.size()) *
                           (m.in_weight.nonZeros() + m.out_weight.nonZeros() + m.hidden());
    if (work > kMaxWork)
      refuse(l, m.blocks.empty() ? "mlp" : m.blocks.front().name,
             "evaluating the MLP on every (fetched, current) pair of the " +
                 std::to_string(domain_.size()) + " window transformations costs " +
                 std::to_string(work) + " interval operations, past the limit " +
                 std::to_string(kMaxWork) +
                 " (the selector rule, --rule selector, covers binary coordinates; the integer "
                 "form's is not built)",
             true);
    std::vector<std::pair<Tau, Vec>> fetches;  // BOS's identity first, then every window
    fetches.emplace_back(identity_, fetched(l, bos_, p, others, bound));
    for (const auto& [tau, v] : domain_) {
      interruption_point();
      fetches.emplace_back(tau, fetched(l, v, p, others, bound));
    }

    auto residual_after = [&](int t, const Vec& y, const Vec& add) {
      Vec in(d_);
      for (int c = 0; c < d_; ++c)
        in[c] = static_[c] ? static_at_[t][c] : add_rounded(y[c], add[c], format_);
      return mlp(l, in);
    };
    std::map<Tau, Vec> next;
    for (const auto& [xt, add] : fetches)
      for (const auto& [yt, y] : domain_) {
        interruption_point();  // one residual per pattern since the last
        const Tau tau = then(xt, yt);
        for (const auto& [key, t] : patterns) {
          Vec out = residual_after(t, y, add);
          for (int c = 0; c < d_; ++c)
            if (static_[c]) out[c] = Interval{};
          auto [it, fresh] = next.emplace(tau, out);
          if (!fresh) it->second = joined(it->second, out);
        }
      }
    // BOS: t = 0 fetches itself and composes identity with identity.
    Vec bos_next = residual_after(0, bos_, fetches.front().second);
    for (int c = 0; c < d_; ++c)
      if (static_[c]) bos_next[c] = Interval{};

    const bool last = l + 1 == static_cast<int>(net_.layers.size());
    if (!last) {
      check_encoding(l, identity_, bos_next, "BOS (t = 0)");
      for (const auto& [tau, v] : next)
        check_encoding(l, tau, v, "the window " + tau_text(a_, tau));
    }
    bos_ = bos_next;
    domain_ = std::move(next);
    obligations.push_back({{"kind", "mlp"},
                           {"layer", l},
                           {"blocks", m.blocks.size()},
                           {"block", m.blocks.empty() ? std::string("mlp") : m.blocks.front().name},
                           {"pairs", pairs},
                           {"static_patterns", patterns.size()},
                           {"domain_after", domain_.size()},
                           {"encoding_checked", !last}});
    record_domain(l);
  }

  // The encoding of a window must be what it was when that transformation was first seen
  // (the letters' at the embedding): a layer that changes it by more than the leaks has not
  // composed exactly, which names the layer that broke, not the unembedding downstream.
  void check_encoding(int l, const Tau& tau, const Vec& v, const std::string& what) {
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

  std::string block_writing(int l, int dim) const {
    const Mlp& m = *net_.layers[l].mlp;
    for (SparseMatrix::InnerIterator it(m.out_weight, dim); it; ++it)
      for (const MlpBlock& b : m.blocks)
        if (it.col() >= b.first && it.col() < b.first + b.count) return b.name;
    return net_.layers[l].heads[0].name;
  }

  void unembedding(nlohmann::json& obligations) {
    const int layers = static_cast<int>(net_.layers.size());
    margin_ = std::numeric_limits<double>::infinity();
    std::string at;
    auto check = [&](const Tau& tau, Vec x, int t, const std::string& what) {
      for (int c = 0; c < d_; ++c)
        if (static_[c]) x[c] = static_at_[t][c];
      const int states = static_cast<int>(net_.unembedding.cols());
      std::vector<Accumulator> acc(states);
      for (int r = 0; r < net_.unembedding.outerSize(); ++r)
        for (SparseMatrix::InnerIterator it(net_.unembedding, r); it; ++it)
          acc[it.col()].add(it.value(), x[r]);
      const int answer = static_cast<int>(tau[a_.initial()]);
      const Interval right = bounds::store(format_, acc[answer].result());
      for (int s = 0; s < states; ++s) {
        if (s == answer) continue;
        const Interval other = bounds::store(format_, acc[s].result());
        const double gap = right.lo - other.hi;
        if (gap < margin_) margin_ = gap, at = what;
        if (gap <= 0.0)
          refuse(layers, "unembedding",
                 "after " + what + " the logit of the answer " + a_.state_name(answer) + " is " +
                     interval_text(right) + ", not above " + a_.state_name(s) + "'s " +
                     interval_text(other));
      }
    };
    std::vector<int> read;
    for (int r = 0; r < net_.unembedding.outerSize(); ++r)
      if (static_[r] && SparseMatrix::InnerIterator(net_.unembedding, r)) read.push_back(r);
    check(identity_, bos_, 0, "the empty word (t = 0)");
    for (const auto& [key, t] : static_patterns(read, layers, "unembedding"))
      for (const auto& [tau, v] : domain_) check(tau, v, t, "the prefix " + tau_text(a_, tau));
    obligations.push_back({{"kind", "unembedding"},
                           {"layer", layers},
                           {"margin", margin_},
                           {"at", at},
                           {"prefixes", domain_.size() + 1}});
  }

  // ---- The selector rule (selector_rule.hpp): per state slot, for binary coordinates. ----

  static Interval hull_of(const std::vector<Interval>& set) {
    Interval h = set.front();
    for (const Interval& v : set) h = bounds::hull(h, v);
    return h;
  }

  // Every letter's slot q holds exactly the code of its image of q, BOS's the code of q; a
  // prefix bit's value set is then {-1, +1}, every other written dimension one interval.
  void slot_sets_from_embedding() {
    const certify_detail::SlotLayout& sl = *slots_;
    auto check_codes = [&](const Vec& v, const Tau& tau, const std::string& what) {
      for (int q = 0; q < sl.n; ++q)
        for (int i = 0; i < sl.b; ++i) {
          const Interval x = v[sl.prefix_dim(q, i)];
          const double want = certify_detail::code_bit(static_cast<int>(tau[q]), i);
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
  std::vector<double> value_bound_of(int l, const Vec& x) const {
    const AttentionHead& h = net_.layers[l].heads[0];
    std::vector<Accumulator> acc(h.value.cols());
    for (int r = 0; r < h.value.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(h.value, r); it; ++it)
        acc[it.col()].add(it.value(), x[r]);
    std::vector<double> bound(h.value.cols(), 0.0);
    for (std::size_t c = 0; c < bound.size(); ++c)
      bound[c] = bounds::store(format_, acc[c].result()).magnitude();
    return bound;
  }

  Vec hull_residual() const {
    Vec x(d_);
    for (int c = 0; c < d_; ++c)
      if (!static_[c]) x[c] = hull_of(sets_[c]);
    return x;
  }

  // The static patterns `part` reads over t = 0..T, as full-width vectors.
  std::vector<Vec> patterns_read(const std::vector<int>& read, int layer,
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

  void selector_layer(int l, nlohmann::json& obligations) {
    const certify_detail::SlotLayout& sl = *slots_;
    const AttentionHead& h = net_.layers[l].heads[0];
    nlohmann::json select = {{"kind", "select"}, {"layer", l}, {"head", h.name}};
    auto [p, others] = fetch_weights(l, select);
    obligations.push_back(select);
    const Vec hull = hull_residual();
    const std::vector<double> bound = value_bound_of(l, hull);
    const Vec added = fetched(l, hull, p, others, bound);
    certify_detail::PreMlp pre;
    pre.sets.assign(d_, {});
    for (int c = 0; c < d_; ++c)
      for (const Interval& v : sets_[c]) pre.sets[c].push_back(add_rounded(v, added[c], format_));
    // The fetched slot q when the key's slot q names s (the key's other slots: any code).
    pre.selector.assign(sl.n, std::vector<Vec>(sl.n, Vec(sl.b)));
    for (int q = 0; q < sl.n; ++q) {
      interruption_point();  // n fetches since the last
      for (int s = 0; s < sl.n; ++s) {
        Vec x = hull;
        for (int i = 0; i < sl.b; ++i)
          x[sl.prefix_dim(q, i)] = sets_[sl.prefix_dim(q, i)][certify_detail::code_bit(s, i) > 0];
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
    std::vector<int> read;
    {
      std::vector<char> seen(d_, 0);
      for (int u = 0; u < m.in_weight.outerSize(); ++u)
        for (SparseMatrix::InnerIterator it(m.in_weight, u); it; ++it)
          if (static_[it.col()] && !seen[it.col()]) seen[it.col()] = 1, read.push_back(it.col());
    }
    pre.patterns = patterns_read(read, l, m.blocks.empty() ? "mlp" : m.blocks.front().name);
    const bool last = l + 1 == static_cast<int>(net_.layers.size());
    std::vector<int> composed;
    for (int q = 0; q < sl.n; ++q)
      if (!last || q == static_cast<int>(a_.initial())) composed.push_back(q);
    auto outcome =
        certify_detail::slot_compose(net_, format_, static_, sl, pre, l, composed, !last);
    sets_ = std::move(outcome.sets);
    obligations.push_back(outcome.obligation);
    invariant_.push_back(
        {{"after_layer", l},
         {"slots", last ? "the initial state's slot holds the code of the state after the prefix"
                        : "slot q holds the code of f(q), f the window's transformation; the "
                          "fetched copy holds 0"}});
  }

  void selector_unembedding(nlohmann::json& obligations) {
    const certify_detail::SlotLayout& sl = *slots_;
    const int layers = static_cast<int>(net_.layers.size());
    const int q0 = static_cast<int>(a_.initial());
    margin_ = std::numeric_limits<double>::infinity();
    std::string at;
    std::vector<int> read;
    for (int r = 0; r < net_.unembedding.outerSize(); ++r)
      if (static_[r] && SparseMatrix::InnerIterator(net_.unembedding, r)) read.push_back(r);
    const Vec hull = hull_residual();
    const int states = static_cast<int>(net_.unembedding.cols());
    for (const Vec& pattern : patterns_read(read, layers, "unembedding"))
      for (int answer = 0; answer < sl.n; ++answer) {
        Vec x = hull;
        for (int c = 0; c < d_; ++c)
          if (static_[c]) x[c] = pattern[c];
        for (int i = 0; i < sl.b; ++i)
          x[sl.prefix_dim(q0, i)] =
              sets_[sl.prefix_dim(q0, i)][certify_detail::code_bit(answer, i) > 0];
        std::vector<Accumulator> acc(states);
        for (int r = 0; r < net_.unembedding.outerSize(); ++r)
          for (SparseMatrix::InnerIterator it(net_.unembedding, r); it; ++it)
            acc[it.col()].add(it.value(), x[r]);
        const Interval right = bounds::store(format_, acc[answer].result());
        for (int s = 0; s < states; ++s) {
          if (s == answer) continue;
          const Interval other = bounds::store(format_, acc[s].result());
          const double gap = right.lo - other.hi;
          if (gap < margin_) margin_ = gap, at = "a prefix that ends in " + a_.state_name(answer);
          if (gap <= 0.0)
            refuse(layers, "unembedding",
                   "when the initial state's slot names " + a_.state_name(answer) +
                       ", its logit is " + interval_text(right) + ", not above " +
                       a_.state_name(s) + "'s " + interval_text(other));
        }
      }
    obligations.push_back({{"kind", "unembedding"},
                           {"layer", layers},
                           {"margin", margin_},
                           {"at", at},
                           {"prefixes", sl.n}});
  }

  const Network& original_;
  const Automaton& a_;
  Arithmetic arithmetic_;  // as asked; the certificate names it
  Format format_;
  long long max_domain_;
  bool selector_;                                    // the rule: per slot, not per pair
  std::optional<certify_detail::SlotLayout> slots_;  // the selector rule's slots
  std::vector<std::vector<Interval>> sets_;          // the selector rule's value sets per dimension
  Network net_;
  int t_max_ = 0, d_ = 0;
  std::vector<char> static_;    // per residual dimension: written by no layer
  std::vector<Vec> static_at_;  // [t]: the static part at t (data dimensions unused)
  Vec bos_;                     // the window part at t = 0
  Tau identity_;
  std::map<Tau, Vec> domain_;     // window transformation -> its encoding's bounds
  std::map<Tau, Vec> reference_;  // the encoding when each transformation was first seen
  nlohmann::json invariant_ = nlohmann::json::array();
  double margin_ = 0.0;
};

}  // namespace

CertifyResult certify(const Network& network, const Automaton& automaton,
                      const CertifyOptions& options) {
  CertifyResult result = ScanCertifier(network, automaton, options).run();
  // Auto: the pairs rule when it decides; the selector rule where it is undecided (too many
  // window transformations) and the scan is in binary coordinates.
  if (options.rule == CertifyRule::Auto && result.refusal && result.refusal->undecided &&
      certify_detail::binary_slots(network, automaton)) {
    CertifyOptions selector = options;
    selector.rule = CertifyRule::Selector;
    return ScanCertifier(network, automaton, selector).run();
  }
  return result;
}

}  // namespace krc
