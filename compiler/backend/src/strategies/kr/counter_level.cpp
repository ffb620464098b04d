// A level whose components have solvable holonomy groups (LevelMode::Counters), or resets
// only (LevelMode::Memory). Per level, in the residual stream:
//   transitions  the letter and the upper coordinates at t-1 select the level's action: a reset
//                (flag + value) or a permutation of a component's tiles (a group element);
//   counters     per component, the running group product y(t) = pi_1 ... pi_t as Z_p counters
//                along a composition series (polycyclic coordinates, primitives/
//                polycyclic_group.hpp): a prefix-sum head and a residue comb each;
//   memory       the latest reset r (a flip-flop head) with its value c_r and the counters there;
//   coordinate   x(t) = c_r . y(r)^-1 . y(t), a lookup over (c_r, y(r), y(t)).
// Without resets x(t) = x(0) . y(t) in the initial value's component.
//
// Exactness: every lookup reads one-hot inputs that are exactly 0 or 1 up to the selection
// heads' e^-20 leakage, and fires with a margin of 1/2 (primitives/categorical.hpp); the
// counts are integers up to the comb's +-1/4 (primitives/residue.hpp).
#include <map>

#include "primitives/attention_heads.hpp"
#include "primitives/residue.hpp"
#include "strategies/kr/cascade_context.hpp"
#include "strategies/kr/level_analysis.hpp"

namespace krc {

namespace {

// One component's counters: the running product of its holonomy group as Z_p exponents.
struct ComponentCounters {
  int slot = -1;
  PolycyclicGroup group;
  std::map<Permutation, int> symbol_of;  // non-identity permutation -> symbol index
  Subspace element;                      // one-hot of the permutation at position t
  std::vector<Subspace> now;             // exponents at t (one-hots)
};

class CounterLevelBuilder {
 public:
  CounterLevelBuilder(CascadeContext& ctx, int d, LevelAnalysis analysis)
      : ctx_(ctx), d_(d), level_(ctx.dec.level(d)), a_(std::move(analysis)),
        labels_(ctx.value_labels(d)) {}

  void build() {
    allocate_actions();
    add_transitions();
    for (auto& c : components_) build_counters(c);
    Categorical x;
    x.labels = labels_;
    x.indicator.resize(level_.width);
    if (a_.resets)
      add_memory_and_coordinate(x);
    else
      add_coordinate_without_resets(x);
    ctx_.coordinate.push_back(std::move(x));
  }

 private:
  Role role(RoleKind kind, int component = 0, int counter = 0, int step = 0) const {
    return ctx_.role(kind, d_, component, counter, step);
  }

  void allocate_actions() {
    auto& layout = ctx_.program.layout();
    if (a_.resets) {
      flag_ = layout.allocate_scalar(ctx_.tag(d_) + " reset flag", role(RoleKind::ResetFlag));
      reset_value_ =
          layout.allocate(ctx_.tag(d_) + " reset value", labels_, role(RoleKind::ResetValue));
    }
    for (std::size_t s = 0; s < a_.groups.size(); ++s) {
      if (!a_.groups[s]) continue;
      ComponentCounters c{static_cast<int>(s), std::move(*a_.groups[s]), {}, {}, {}};
      std::vector<std::string> element_labels;
      for (const auto& p : a_.permutations[s]) {
        c.symbol_of.emplace(p, static_cast<int>(element_labels.size()));
        std::string label = "(";
        for (std::size_t i = 0; i < p.size(); ++i) label += (i ? " " : "") + std::to_string(p[i]);
        element_labels.push_back(label + ")");
      }
      c.element = layout.allocate(ctx_.tag(d_) + " slot " + std::to_string(s + 1) + " permutation",
                                  element_labels, role(RoleKind::GroupElement, c.slot + 1));
      components_.push_back(std::move(c));
    }
  }

  void add_transitions() {
    Terms at_bos;
    if (a_.resets) at_bos = {{flag_[0], 1.0f}, {reset_value_[ctx_.initial[d_]], 1.0f}};
    ctx_.add_transitions(
        d_,
        [&](const LevelAction& act) -> Terms {
          if (act.reset) return {{flag_[0], 1.0f}, {reset_value_[act.reset_to], 1.0f}};
          for (const auto& c : components_)
            if (c.slot == act.slot) {
              auto it = c.symbol_of.find(act.permutation);
              if (it != c.symbol_of.end()) return {{c.element[it->second], 1.0f}};
            }
          return {};
        },
        at_bos);
  }

  void build_counters(ComponentCounters& c);
  Terms counter_increment(ComponentCounters& c, int i, const Categorical& element,
                          const std::vector<int>& element_of_symbol,
                          const std::vector<Categorical>& before);
  void add_memory_and_coordinate(Categorical& x);
  void add_combine_after_reset(Categorical& x, const Subspace& copied,
                               const std::vector<std::vector<Subspace>>& at_reset);
  void add_coordinate_without_resets(Categorical& x);
  bool has_counters(int slot) const {
    for (const auto& c : components_)
      if (c.slot == slot) return true;
    return false;
  }

  CascadeContext& ctx_;
  const int d_;
  const Level& level_;
  LevelAnalysis a_;
  const std::vector<std::string> labels_;
  Subspace flag_, reset_value_;
  std::vector<ComponentCounters> components_;
};

// Counter i: its increment (linear in the group element for the top counter, otherwise a
// lookup of the element and the counters above at t-1), the sum of increments (a prefix-sum
// head), then the residues of the count now and before this position (the latter feeds the
// increments of the counters below).
void CounterLevelBuilder::build_counters(ComponentCounters& c) {
  auto& layout = ctx_.program.layout();
  const auto& g = c.group;
  Categorical element;
  element.indicator.resize(c.symbol_of.size());
  element.labels.resize(c.symbol_of.size());
  std::vector<int> element_of_symbol(c.symbol_of.size());
  for (const auto& [perm, symbol] : c.symbol_of) {
    element.indicator[symbol] = {{c.element[symbol], 1.0f}};
    element_of_symbol[symbol] = *g.index_of(perm);
  }
  std::vector<Categorical> before;
  for (int i = 0; i < g.series_length(); ++i) {
    const int p = g.prime(i);
    const std::string counter = ctx_.tag(d_) + " slot " + std::to_string(c.slot + 1) +
                                " counter " + std::to_string(i + 1) + " (Z" + std::to_string(p) +
                                ")";
    const Terms increment = counter_increment(c, i, element, element_of_symbol, before);
    Subspace count =
        layout.allocate_scalar(counter + " count", role(RoleKind::CounterSum, c.slot + 1, i + 1));
    ctx_.program.add(prefix_sum(ctx_.features, increment, count[0], counter + ": sum of increments",
                                role(RoleKind::CounterSum, c.slot + 1, i + 1)),
                     counter);

    std::vector<std::string> residues;
    for (int r = 0; r < p; ++r) residues.push_back(std::to_string(r));
    const long max_value = static_cast<long>(p - 1) * ctx_.program.max_len();
    const Role now_role = role(RoleKind::CounterResidue, c.slot + 1, i + 1);
    const Role before_role = role(RoleKind::CounterResidue, c.slot + 1, i + 1, 1);
    MlpOp residue;
    residue.name = counter + ": residue";
    residue.begin_block(counter + ": count mod " + std::to_string(p), now_role);
    Subspace now = layout.allocate(counter, residues, now_role);
    add_residue_units(residue, {{count[0], 1.0f}}, p, max_value, now);
    c.now.push_back(now);
    if (i + 1 < g.series_length()) {
      residue.begin_block(counter + ": count before t mod " + std::to_string(p), before_role);
      Subspace prev = layout.allocate(counter + " at t-1", residues, before_role);
      Terms z{{count[0], 1.0f}};
      for (auto [dim, w] : increment) z.emplace_back(dim, -w);
      add_residue_units(residue, z, p, max_value, prev);
      before.push_back(Categorical::one_hot(prev, residues));
    }
    ctx_.program.add(std::move(residue), counter);
  }
}

Terms CounterLevelBuilder::counter_increment(ComponentCounters& c, int i,
                                             const Categorical& element,
                                             const std::vector<int>& element_of_symbol,
                                             const std::vector<Categorical>& before) {
  const auto& g = c.group;
  Terms increment;
  if (i == 0) {
    // The top counter's increment is a homomorphism of the new factor alone: linear.
    for (std::size_t s = 0; s < element_of_symbol.size(); ++s)
      if (int w = g.increment(0, element_of_symbol[s], {}); w != 0)
        increment.emplace_back(c.element[static_cast<int>(s)], static_cast<float>(w));
    return increment;
  }
  const std::string counter = ctx_.tag(d_) + " slot " + std::to_string(c.slot + 1) + " counter " +
                              std::to_string(i + 1) + " (Z" + std::to_string(g.prime(i)) + ")";
  const Role inc_role = role(RoleKind::CounterIncrement, c.slot + 1, i + 1);
  Subspace inc = ctx_.program.layout().allocate_scalar(counter + " increment", inc_role);
  MlpOp lookup;
  lookup.name = counter + ": increment from (factor, counters above at t-1)";
  lookup.role = inc_role;
  std::vector<const Categorical*> inputs{&element};
  for (int j = 0; j < i; ++j) inputs.push_back(&before[j]);
  for (std::size_t s = 0; s < element_of_symbol.size(); ++s)
    for (int idx = 0; idx < g.prefix_count(i); ++idx) {
      auto prev = g.prefix_from_index(i, idx);
      int w = g.increment(i, element_of_symbol[s], prev);
      if (w == 0) continue;
      std::vector<int> values{static_cast<int>(s)};
      values.insert(values.end(), prev.begin(), prev.end());
      add_lookup_unit(lookup, inputs, values, {{inc[0], static_cast<float>(w)}});
    }
  ctx_.program.add(std::move(lookup), counter);
  return {{inc[0], 1.0f}};
}

// The memory head copies the reset value and every counter at the latest reset; components
// with counters then combine them with the counters now.
void CounterLevelBuilder::add_memory_and_coordinate(Categorical& x) {
  auto& layout = ctx_.program.layout();
  Subspace copied = layout.allocate(ctx_.tag(d_) + " value at latest reset", labels_,
                                    role(RoleKind::Memory));
  std::vector<Entry> copy;
  for (int v = 0; v < level_.width; ++v) copy.push_back({reset_value_[v], copied[v], 1.0f});
  std::vector<std::vector<Subspace>> at_reset(components_.size());
  for (std::size_t c = 0; c < components_.size(); ++c)
    for (std::size_t i = 0; i < components_[c].now.size(); ++i) {
      const Subspace& now = components_[c].now[i];
      std::vector<std::string> residues;
      for (int r = 0; r < now.width; ++r) residues.push_back(std::to_string(r));
      Subspace there = layout.allocate(now.name + " at latest reset", residues,
                                       role(RoleKind::Memory, components_[c].slot + 1,
                                            static_cast<int>(i) + 1));
      for (int r = 0; r < now.width; ++r) copy.push_back({now[r], there[r], 1.0f});
      at_reset[c].push_back(there);
    }
  ctx_.program.add(latest_flagged(ctx_.features, flag_[0], copy,
                                  ctx_.tag(d_) + ": memory (latest reset)", role(RoleKind::Memory)),
                   ctx_.tag(d_) + ": memory");
  for (int v = 0; v < level_.width; ++v)
    if (v == level_.dummy || !has_counters(level_.slot_of[v]))
      x.indicator[v].emplace_back(copied[v], 1.0f);
  if (!components_.empty()) add_combine_after_reset(x, copied, at_reset);
}

void CounterLevelBuilder::add_combine_after_reset(
    Categorical& x, const Subspace& copied, const std::vector<std::vector<Subspace>>& at_reset) {
  Subspace out = ctx_.program.layout().allocate(ctx_.tag(d_) + " coordinate", labels_,
                                                role(RoleKind::Coordinate));
  MlpOp combine;
  combine.name = ctx_.tag(d_) + ": reset value . (product at reset)^-1 . (product now)";
  combine.role = role(RoleKind::Coordinate);
  Categorical copied_value = Categorical::one_hot(copied, labels_);
  for (std::size_t c = 0; c < components_.size(); ++c) {
    const auto& g = components_[c].group;
    std::vector<Categorical> then_cat, now_cat;
    for (const auto& s : at_reset[c]) then_cat.push_back(Categorical::one_hot(s, {}));
    for (const auto& s : components_[c].now) now_cat.push_back(Categorical::one_hot(s, {}));
    std::vector<const Categorical*> inputs{&copied_value};
    for (const auto& cat : then_cat) inputs.push_back(&cat);
    for (const auto& cat : now_cat) inputs.push_back(&cat);
    const int first = level_.first_value[components_[c].slot];
    const int tiles = static_cast<int>(level_.slots[components_[c].slot].tiles.size());
    for (int tile = 0; tile < tiles; ++tile)
      for (int then = 0; then < g.order(); ++then)
        for (int now = 0; now < g.order(); ++now) {
          int z = g.multiply(g.inverse(then), now);
          std::vector<int> values{first + tile};
          for (int e : g.exponents(then)) values.push_back(e);
          for (int e : g.exponents(now)) values.push_back(e);
          add_lookup_unit(combine, inputs, values, {{out[first + g.element(z)[tile]], 1.0f}});
        }
    for (int tile = 0; tile < tiles; ++tile)
      x.indicator[first + tile].emplace_back(out[first + tile], 1.0f);
  }
  ctx_.program.add(std::move(combine), ctx_.tag(d_) + ": coordinate");
}

// No resets: x(t) = x(0) . y(t), all in the initial value's component. With one counter the
// coordinate is a linear readout of its residue; otherwise a lookup over the exponents.
void CounterLevelBuilder::add_coordinate_without_resets(Categorical& x) {
  const auto& c = components_.front();
  const auto& g = c.group;
  const int first = level_.first_value[c.slot];
  const int tile0 = level_.tile_of[ctx_.initial[d_]];
  if (g.series_length() == 1) {
    for (int y = 0; y < g.order(); ++y)
      x.indicator[first + g.element(y)[tile0]].emplace_back(c.now[0][g.exponents(y)[0]], 1.0f);
    return;
  }
  Subspace out = ctx_.program.layout().allocate(ctx_.tag(d_) + " coordinate", labels_,
                                                role(RoleKind::Coordinate));
  MlpOp combine;
  combine.name = ctx_.tag(d_) + ": initial value . product now";
  combine.role = role(RoleKind::Coordinate);
  std::vector<Categorical> now_cat;
  for (const auto& s : c.now) now_cat.push_back(Categorical::one_hot(s, {}));
  std::vector<const Categorical*> inputs;
  for (const auto& cat : now_cat) inputs.push_back(&cat);
  for (int y = 0; y < g.order(); ++y)
    add_lookup_unit(combine, inputs, g.exponents(y), {{out[first + g.element(y)[tile0]], 1.0f}});
  for (int v = 0; v < level_.width; ++v) x.indicator[v].emplace_back(out[v], 1.0f);
  ctx_.program.add(std::move(combine), ctx_.tag(d_) + ": coordinate");
}

}  // namespace

void build_counter_level(CascadeContext& ctx, int d, LevelAnalysis analysis) {
  CounterLevelBuilder(ctx, d, std::move(analysis)).build();
}

}  // namespace krc
