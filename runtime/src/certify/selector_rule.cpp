// The selector rule (selector_rule.hpp): the compose MLP of a binary-coordinate scan proved
// bit by bit, with the fetched slot fixed to each state's code.
#include "certify/selector_rule.hpp"

#include <algorithm>
#include <string>

#include "certify/certify_common.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::certify_detail {

namespace {

using bounds::Accumulator;
using bounds::Interval;
using Vec = std::vector<Interval>;

// Joint values of the open units' other inputs one bit may enumerate: the binary compose
// opens 2 units reading 2 bits (4 combinations); more means the rule does not fit the block.
constexpr long long kMaxCombinations = 4096;

std::string block_of(const Mlp& m, int unit) {
  for (const MlpBlock& b : m.blocks)
    if (unit >= b.first && unit < b.first + b.count) return b.name;
  return "mlp";
}

// One written dimension: its units, the slot fixed as selector, what it must become.
class BitCheck {
 public:
  BitCheck(const Network& net, bounds::Format format, const std::vector<char>& is_static,
           const SlotLayout& slots, const PreMlp& pre, int layer, int dim)
      : m_(*net.layers[layer].mlp),
        net_(net),
        format_(format),
        static_(is_static),
        slots_(slots),
        pre_(pre),
        layer_(layer),
        dim_(dim) {
    for (SparseMatrix::InnerIterator it(m_.out_weight, dim); it; ++it)
      if (it.value() != 0.0f) units_.push_back({static_cast<int>(it.col()), it.value()});
    block_ = units_.empty() ? block_of(m_, 0) : block_of(m_, units_.front().first);
  }

  // The fetched slot read by the most of this dimension's units (-1: none).
  int most_read_slot() const {
    std::vector<int> count(slots_.n, 0);
    for (auto [u, w] : units_)
      for (SparseMatrix::InnerIterator it(m_.in_weight, u); it; ++it) {
        const int c = static_cast<int>(it.col()) - slots_.fetched;
        if (it.value() != 0.0f && c >= 0 && c < slots_.n * slots_.b) ++count[c / slots_.b];
      }
    const auto best = std::max_element(count.begin(), count.end());
    return *best > 0 ? static_cast<int>(best - count.begin()) : -1;
  }

  struct Result {
    Vec by_target;  // [0]/[1]: the new value's hull when the target bit is -1/+1 (or [0]: all)
    long long evaluations = 0;
    int open_units = 0, open_inputs = 0;
    double drift = 0.0;
  };

  // With the fetched slot `slot` fixed to state s's code (slot -1: nothing fixed) and the
  // static pattern p: the new value for every joint value of the open units' inputs. With
  // `target` >= 0 the new value must be that dimension's bit (+-1 within kDrift); with
  // `must_clear`, 0 within kDrift.
  Result evaluate(int slot, int s, const Vec& pattern, int target, bool must_clear) const {
    const Fixed fixed{this, slot, s, &pattern};
    const Opened o = opened(fixed, target);
    Result r;
    r.by_target.assign(2, Interval{});
    std::vector<char> seen(2, 0);
    r.open_units = static_cast<int>(o.units.size());
    r.open_inputs = static_cast<int>(o.enumerated.size());
    std::vector<int> index(o.enumerated.size(), 0);
    for (long long k = 0; k < o.combinations; ++k) {
      long long rest = k;
      for (std::size_t g = 0; g < o.enumerated.size(); ++g) {
        const long long size = static_cast<long long>(pre_.sets[o.enumerated[g]].size());
        index[g] = static_cast<int>(rest % size);
        rest /= size;
      }
      const Joint value{&fixed, &o.enumerated, &index};
      Accumulator out;
      for (auto [u, w] : o.units) out.add(w, bounds::relu(hidden(u, value)));
      const Interval v =
          add_rounded(value(dim_), mlp_sum(out, m_.out_bias[dim_], format_), format_);
      ++r.evaluations;
      int which = 0;
      if (target >= 0) {
        const auto at = std::find(o.enumerated.begin(), o.enumerated.end(), target);
        which = at == o.enumerated.end() ? 0 : index[at - o.enumerated.begin()];
      }
      if (target >= 0 || must_clear)
        r.drift = std::max(r.drift, checked_drift(v, target >= 0 ? (which ? 1.0 : -1.0) : 0.0, slot,
                                                  s, o.enumerated, index));
      r.by_target[which] = seen[which] ? bounds::hull(r.by_target[which], v) : v;
      seen[which] = 1;
    }
    if (!seen[1]) r.by_target.resize(1);
    return r;
  }

  const std::string& block() const { return block_; }

 private:
  // A residual dimension's value with the fetched slot `slot` fixed to state s's code, the
  // static ones at `pattern`, every other at its set's hull.
  struct Fixed {
    const BitCheck* check;
    int slot, s;
    const Vec* pattern;
    bool in_slot(int c) const {
      const int f = c - check->slots_.fetched;
      return slot >= 0 && f >= slot * check->slots_.b && f < (slot + 1) * check->slots_.b;
    }
    Interval operator()(int c) const {
      if (check->static_[c]) return (*pattern)[c];
      if (in_slot(c))
        return check->pre_.selector[slot][s][c - check->slots_.fetched - slot * check->slots_.b];
      return hull_of(check->pre_.sets[c]);
    }
  };

  // As Fixed, but the enumerated dimensions at their index-th value.
  struct Joint {
    const Fixed* fixed;
    const std::vector<int>* enumerated;
    const std::vector<int>* index;
    Interval operator()(int c) const {
      for (std::size_t g = 0; g < enumerated->size(); ++g)
        if ((*enumerated)[g] == c) return fixed->check->pre_.sets[c][(*index)[g]];
      return (*fixed)(c);
    }
  };

  // The units not off under `fixed` and the dimensions whose value sets are walked jointly.
  struct Opened {
    std::vector<std::pair<int, float>> units;
    std::vector<int> enumerated;
    long long combinations = 1;
  };

  template <class Value>
  Interval hidden(int u, const Value& value) const {
    Accumulator acc;
    for (SparseMatrix::InnerIterator it(m_.in_weight, u); it; ++it)
      acc.add(it.value(), value(static_cast<int>(it.col())));
    return mlp_sum(acc, m_.in_bias[u], format_);
  }

  // Off units (upper bound <= 0 with the rest bounded) contribute exactly 0; the open ones'
  // inputs that hold more than one value, the dimension itself and the target are walked.
  Opened opened(const Fixed& fixed, int target) const {
    Opened o;
    auto walk = [&](int c) {
      if (static_[c] || pre_.sets[c].size() < 2 || fixed.in_slot(c)) return;
      if (std::find(o.enumerated.begin(), o.enumerated.end(), c) == o.enumerated.end())
        o.enumerated.push_back(c);
    };
    for (auto [u, w] : units_) {
      if (hidden(u, fixed).hi <= 0.0) continue;
      o.units.push_back({u, w});
      for (SparseMatrix::InnerIterator it(m_.in_weight, u); it; ++it)
        if (it.value() != 0.0f) walk(static_cast<int>(it.col()));
    }
    walk(dim_);
    if (target >= 0) walk(target);
    for (int c : o.enumerated) {
      o.combinations *= static_cast<long long>(pre_.sets[c].size());
      if (o.combinations > kMaxCombinations)
        refuse(layer_, block_,
               "the selector rule leaves " + std::to_string(o.units.size()) + " open units on '" +
                   net_.residual_labels[dim_] + "' reading " + std::to_string(o.enumerated.size()) +
                   " more bits (over " + std::to_string(kMaxCombinations) +
                   " joint values): the block is not the "
                   "binary compose",
               true);
    }
    return o;
  }

  // The new value's distance from `want`, refused past kDrift with the inputs that gave it.
  double checked_drift(Interval v, double want, int slot, int s, const std::vector<int>& enumerated,
                       const std::vector<int>& index) const {
    const double drift = std::max(std::abs(v.lo - want), std::abs(v.hi - want));
    if (drift <= kDrift) return drift;
    std::string inputs;
    for (std::size_t g = 0; g < enumerated.size(); ++g)
      inputs += (g ? ", '" : "'") + net_.residual_labels[enumerated[g]] +
                "' = " + interval_text(pre_.sets[enumerated[g]][index[g]]);
    refuse(layer_, block_,
           "'" + net_.residual_labels[dim_] + "' becomes " + interval_text(v) +
               " where it must be " + number(want) +
               (slot >= 0 ? " (the fetched copy of " + state_name(slot) + "'s slot names " +
                                state_name(s) + "; "
                          : " (") +
               (inputs.empty() ? std::string("no other input varies") : inputs) + ")");
  }

  std::string state_name(int q) const {
    return q < static_cast<int>(net_.states.size()) ? net_.states[q] : std::to_string(q);
  }

  const Mlp& m_;
  const Network& net_;
  bounds::Format format_;
  const std::vector<char>& static_;
  const SlotLayout& slots_;
  const PreMlp& pre_;
  int layer_, dim_;
  std::vector<std::pair<int, float>> units_;
  std::string block_;
};

}  // namespace

std::optional<SlotLayout> binary_slots(const Network& network, const Automaton& automaton) {
  SlotLayout s;
  s.n = static_cast<int>(automaton.state_count());
  s.b = 1;
  while ((1LL << s.b) < s.n) ++s.b;
  int found = 0;
  for (const ResidualSubspace& sub : network.subspaces) {
    const bool prefix = sub.role.kind == RoleKind::ScanPrefix,
               fetched = sub.role.kind == RoleKind::ScanFetch;
    if (!prefix && !fetched) continue;
    if (sub.width != s.n * s.b || sub.first < 0 ||
        sub.first + sub.width > static_cast<int>(network.residual_labels.size()))
      return std::nullopt;
    for (int q = 0; q < s.n; ++q)
      for (int i = 0; i < s.b; ++i) {
        const std::string want = "f(" + automaton.state_name(q) + "):bit" + std::to_string(i);
        const std::string& label = network.residual_labels.at(sub.first + q * s.b + i);
        if (label.size() < want.size() ||
            label.compare(label.size() - want.size(), want.size(), want) != 0)
          return std::nullopt;
      }
    (prefix ? s.prefix : s.fetched) = sub.first;
    ++found;
  }
  if (found != 2) return std::nullopt;
  return s;
}

namespace {

// What the obligation reports over every dimension of a layer.
struct ComposeFigures {
  long long evaluations = 0;
  int most_open = 0, most_inputs = 0;
  double drift = 0.0;
  std::string block = "mlp";
  void add(const BitCheck::Result& r) {
    evaluations += r.evaluations;
    most_open = std::max(most_open, r.open_units);
    most_inputs = std::max(most_inputs, r.open_inputs);
    drift = std::max(drift, r.drift);
  }
};

// Dimension c's value sets after the MLP: every static pattern, every state the selector
// slot may name. A composed prefix bit keeps its classes apart, by the target's bit; a prefix
// bit not composed here keeps both as one hull (nothing says which it is).
std::vector<Interval> dimension_after(const Network& net, bounds::Format format,
                                      const std::vector<char>& is_static, const SlotLayout& slots,
                                      const PreMlp& pre, int layer, int c, bool composed,
                                      bool clear, ComposeFigures& figures) {
  const BitCheck check(net, format, is_static, slots, pre, layer, c);
  const bool prefix = c >= slots.prefix && c < slots.prefix + slots.n * slots.b;
  const bool fetched = c >= slots.fetched && c < slots.fetched + slots.n * slots.b;
  const int q = prefix ? (c - slots.prefix) / slots.b : (c - slots.fetched) / slots.b;
  const int i = prefix ? (c - slots.prefix) % slots.b : (c - slots.fetched) % slots.b;
  // The slot x(q) for the bits of q; for any other dimension the one its units read most.
  const int slot = composed || fetched ? q : check.most_read_slot();
  if (composed) figures.block = check.block();
  std::vector<Interval> next(prefix ? 2 : 1);
  std::vector<char> seen(next.size(), 0);
  for (const Vec& pattern : pre.patterns)
    for (int s = 0; s < (slot >= 0 ? slots.n : 1); ++s) {
      const int target = composed ? slots.prefix_dim(s, i) : -1;
      const auto r = check.evaluate(slot, s, pattern, target, clear && fetched);
      figures.add(r);
      for (std::size_t w = 0; w < r.by_target.size(); ++w) {
        const std::size_t into = prefix && composed ? w : 0;
        next[into] = seen[into] ? bounds::hull(next[into], r.by_target[w]) : r.by_target[w];
        seen[into] = 1;
      }
    }
  if (prefix && !composed) next[1] = next[0];
  if (prefix && composed && !(seen[0] && seen[1]))
    refuse(layer, figures.block,
           "'" + net.residual_labels[c] +
               "' was never asked to be both -1 and +1: the selector rule's enumeration is "
               "incomplete");
  return next;
}

}  // namespace

SlotComposeOutcome slot_compose(const Network& net, bounds::Format format,
                                const std::vector<char>& is_static, const SlotLayout& slots,
                                const PreMlp& pre, int layer, const std::vector<int>& composed,
                                bool clear) {
  const int d = net.d_model();
  SlotComposeOutcome result;
  result.sets = pre.sets;
  std::vector<char> is_composed(d, 0);
  for (int q : composed)
    for (int i = 0; i < slots.b; ++i) is_composed[slots.prefix_dim(q, i)] = 1;
  ComposeFigures figures;
  for (int c = 0; c < d; ++c) {
    if (is_static[c]) continue;
    interruption_point();  // n evaluations of one dimension since the last
    result.sets[c] = dimension_after(net, format, is_static, slots, pre, layer, c,
                                     is_composed[c] != 0, clear, figures);
  }
  result.obligation = {{"kind", "mlp"},
                       {"rule", "selector"},
                       {"layer", layer},
                       {"block", figures.block},
                       {"slots_composed", composed.size()},
                       {"bits", slots.b},
                       {"selector_values", slots.n},
                       {"patterns", pre.patterns.size()},
                       {"evaluations", figures.evaluations},
                       {"most_open_units", figures.most_open},
                       {"most_open_inputs", figures.most_inputs},
                       {"max_drift", figures.drift},
                       {"fetched_cleared", clear}};
  return result;
}

}  // namespace krc::certify_detail
