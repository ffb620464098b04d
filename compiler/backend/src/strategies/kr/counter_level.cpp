// A level whose components have solvable holonomy groups (LevelMode::Counters), or resets
// only (LevelMode::Memory). Per level, in the residual stream:
//   transitions  the letter and the upper coordinates at t-1 select the level's action: a reset
//                (flag + value) or a permutation of a component's tiles (a group element);
//   counters     per component, the running group product y(t) = pi_1 ... pi_t as Z_p counters
//                along a composition series (polycyclic coordinates, primitives/
//                polycyclic_group.hpp): prefix-sum heads (KrPlan::counter_sum) and a
//                residue comb each;
//   memory       the latest reset r (a flip-flop head) with its value c_r and the counters there;
//   coordinate   x(t) = c_r . y(r)^-1 . y(t), a lookup over (c_r, y(r), y(t)).
// Without resets x(t) = x(0) . y(t) in the initial value's component.
//
// Exactness: every lookup reads one-hot inputs that are exactly 0 or 1 up to the selection
// heads' e^-20 leakage, and fires with a margin of 1/2 (primitives/categorical.hpp); the
// counts are integers up to the comb's +-1/4 (primitives/residue.hpp), exact integers when
// the dyadic heads sum them.
#include "strategies/kr/counter_level.hpp"

#include "primitives/attention_heads.hpp"
#include "primitives/exact_attention.hpp"

namespace krc {

void CounterLevelBuilder::build() {
  allocate_actions();
  add_transitions();
  if (plan_.previous_in_place) add_reset_fetch();
  for (auto& c : components_) build_counters(c);
  if (a_.resets) {
    add_memory_and_coordinate();
    return;
  }
  Categorical x;
  x.labels = labels_;
  x.indicator.resize(level_.width);
  add_coordinate_without_resets(x);
  ctx_.coordinate[d_] = std::move(x);
}

void CounterLevelBuilder::allocate_actions() {
  auto& layout = ctx_.program.layout();
  if (a_.resets) {
    flag_ = layout.allocate_scalar(ctx_.tag(d_) + " reset flag", role(RoleKind::ResetFlag));
    reset_value_ =
        layout.allocate(ctx_.tag(d_) + " reset value", labels_, role(RoleKind::ResetValue));
  }
  for (std::size_t s = 0; s < a_.groups.size(); ++s) {
    if (!a_.groups[s]) continue;
    ComponentCounters c{static_cast<int>(s), std::move(*a_.groups[s]), {}, {}, {}, {}};
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

void CounterLevelBuilder::add_transitions() {
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

// Counter i: the sum of its increments (a prefix-sum head), then one MLP that reads the count
// through residue combs: the residue now (for the memory and the coordinate), the residue
// before t (a gate of the increments further down), and, fused into gated combs, the next
// counter's increment f(pi_t, e_0..e_i(t-1)) or, for the last counter of a level without
// resets, the coordinate x0 . y(t) itself. So a series of k counters takes k layers.
void CounterLevelBuilder::build_counters(ComponentCounters& c) {
  auto& layout = ctx_.program.layout();
  const auto& g = c.group;
  const int k = g.series_length();
  Categorical element;
  element.indicator.resize(c.symbol_of.size());
  std::vector<int> element_of_symbol(c.symbol_of.size());
  for (const auto& [perm, symbol] : c.symbol_of) {
    element.indicator[symbol] = {{c.element[symbol], 1.0f}};
    element_of_symbol[symbol] = *g.index_of(perm);
  }
  // The top counter's increment is a homomorphism of the new factor alone: linear.
  Terms increment;
  for (std::size_t s = 0; s < element_of_symbol.size(); ++s)
    if (int w = g.increment(0, element_of_symbol[s], {}); w != 0)
      increment.emplace_back(c.element[static_cast<int>(s)], static_cast<float>(w));
  std::vector<Subspace>& before = c.before;
  for (int i = 0; i < k; ++i) {
    const int p = g.prime(i);
    const std::string counter = counter_name(c, i);
    const CombInput now = add_count(c, i, increment);
    CombInput before_count = now;
    for (auto [dim, w] : increment) before_count.z.emplace_back(dim, -w);
    MlpOp mlp;
    mlp.name = counter + ": residue";
    const bool fused_coordinate = !a_.resets && k >= 2 && i == k - 1;
    if (!fused_coordinate) {
      const Role now_role = role(RoleKind::CounterResidue, c.slot + 1, i + 1);
      mlp.begin_block(counter + ": count mod " + std::to_string(p), now_role);
      c.now.push_back(layout.allocate(counter, residue_labels(p), now_role));
      add_residue_units(mlp, now, p, c.now.back());
    }
    if (i + 2 < k || plan_.previous_in_place) {
      const Role before_role = role(RoleKind::CounterResidue, c.slot + 1, i + 1, 1);
      mlp.begin_block(counter + ": count before t mod " + std::to_string(p), before_role);
      before.push_back(layout.allocate(counter + " at t-1", residue_labels(p), before_role));
      add_residue_units(mlp, before_count, p, before.back());
    }
    if (i + 1 < k)
      increment = add_next_increment(mlp, c, i, before_count, element, element_of_symbol, before);
    if (fused_coordinate) add_fused_coordinate(mlp, c, now);
    ctx_.program.add(std::move(mlp), counter);
  }
}

// Counter i's count: the sum of its increments over positions 1..t (KrPlan::counter_sum):
// Whole, one head; Dyadic, one head per bit of t, each writing its block's exact sum into its
// own dimension (the count is their sum, in the same one layer); Blocks, the sum W over t's
// block so far plus R, the sum over the blocks before of their sums mod p: R + W = count
// (mod p), and both are small. W and the block before's sum come from two heads in one
// layer; an MLP writes the block before's residue at each block start; a third head sums
// those in the next layer.
CombInput CounterLevelBuilder::add_count(const ComponentCounters& c, int i,
                                         const Terms& increment) {
  auto& layout = ctx_.program.layout();
  auto& f = ctx_.features;
  const std::string counter = counter_name(c, i);
  const int p = c.group.prime(i), n = ctx_.program.max_len(), block = plan_block_;
  auto counter_role = [&](RoleKind kind, int step = 0) {
    return role(kind, c.slot + 1, i + 1, step);
  };
  if (plan_sum_ == CounterSum::Dyadic)
    return {add_dyadic_sum(f, increment, counter + " sum", counter + ": sum of increments",
                           counter_role(RoleKind::CounterSum), counter),
            static_cast<long>(p - 1) * n, f.one()[0]};
  if (plan_sum_ == CounterSum::Whole) {
    Subspace count = layout.allocate_scalar(counter + " count", counter_role(RoleKind::CounterSum));
    ctx_.program.add(prefix_sum(f, increment, count[0], counter + ": sum of increments",
                                counter_role(RoleKind::CounterSum)),
                     counter);
    return {{{count[0], 1.0f}}, static_cast<long>(p - 1) * n, f.one()[0]};
  }
  const Role window_role = counter_role(RoleKind::CounterWindowSum);
  const Role previous_role = counter_role(RoleKind::CounterWindowSum, 1);
  const Role residue_role = counter_role(RoleKind::CounterBlockResidue);
  const Role sum_role = counter_role(RoleKind::CounterBlockSum);
  Subspace window = layout.allocate_scalar(counter + " sum in block", window_role);
  Subspace previous = layout.allocate_scalar(counter + " sum in the block before", previous_role);
  Subspace residue =
      layout.allocate_scalar(counter + " block residue at block start", residue_role);
  Subspace blocks = layout.allocate_scalar(counter + " sum of block residues", sum_role);
  ctx_.program.add(window_sum(f, block, false, increment, window[0],
                              counter + ": sum of increments in the block", window_role),
                   counter);
  ctx_.program.add(window_sum(f, block, true, increment, previous[0],
                              counter + ": sum of increments in the block before", previous_role),
                   counter);
  MlpOp mlp;
  mlp.name = counter + ": residue of the block before, at block starts";
  mlp.role = residue_role;
  const long block_max = static_cast<long>(p - 1) * block;
  CombGate at_start{{{f.block_start(block)[0], 1.0f}}, 1, static_cast<float>(block_max + 2)};
  add_comb_units(
      mlp, {{{previous[0], 1.0f}}, block_max, f.one()[0]}, p,
      [&](int r) {
        return r ? Terms{{residue[0], static_cast<float>(r)}} : Terms{};
      },
      &at_start);
  ctx_.program.add(std::move(mlp), counter);
  ctx_.program.add(block_sum(f, block, {{residue[0], 1.0f}}, blocks[0],
                             counter + ": sum of block residues", sum_role),
                   counter);
  const long blocks_max = (static_cast<long>(n) + block - 1) / block;
  return {{{blocks[0], 1.0f}, {window[0], 1.0f}},
          static_cast<long>(p - 1) * (block + blocks_max),
          f.one()[0]};
}

// Counter i+1's increment f(pi_t, e_0(t-1) .. e_i(t-1)): for every symbol pi and exponents
// e_0..e_{i-1} at t-1 (gates), a comb of counter i's count before t writes f(pi, e, r).
Terms CounterLevelBuilder::add_next_increment(MlpOp& mlp, const ComponentCounters& c, int i,
                                              const CombInput& before_count,
                                              const Categorical& element,
                                              const std::vector<int>& element_of_symbol,
                                              const std::vector<Subspace>& before) {
  const auto& g = c.group;
  const std::string next = counter_name(c, i + 1);
  const Role inc_role = role(RoleKind::CounterIncrement, c.slot + 1, i + 2);
  Subspace inc = ctx_.program.layout().allocate_scalar(next + " increment", inc_role);
  mlp.begin_block(next + ": increment from (factor, counters above at t-1)", inc_role);
  for (std::size_t s = 0; s < element_of_symbol.size(); ++s)
    for (int idx = 0; idx < g.prefix_count(i); ++idx) {
      const auto prefix = g.prefix_from_index(i, idx);
      std::vector<float> weight(g.prime(i));
      bool any = false;
      for (int r = 0; r < g.prime(i); ++r) {
        auto upper = prefix;
        upper.push_back(r);
        weight[r] = static_cast<float>(g.increment(i + 1, element_of_symbol[s], upper));
        any = any || weight[r] != 0.0f;
      }
      if (!any) continue;
      CombGate gate{element.indicator[s], 1 + i, static_cast<float>(before_count.max_value + 2)};
      for (int j = 0; j < i; ++j) gate.indicators.emplace_back(before[j][prefix[j]], 1.0f);
      add_comb_units(
          mlp, before_count, g.prime(i),
          [&](int r) {
            return weight[r] != 0.0f ? Terms{{inc[0], weight[r]}} : Terms{};
          },
          &gate);
    }
  return {{inc[0], 1.0f}};
}

// Without resets the coordinate is x0 . y(t): for every e_0..e_{k-2} now (gates), a comb of
// the last counter writes the one-hot of x0 . y(e_0, .., e_{k-2}, r).
void CounterLevelBuilder::add_fused_coordinate(MlpOp& mlp, ComponentCounters& c,
                                               const CombInput& count) {
  const auto& g = c.group;
  const int k = g.series_length();
  const int first = level_.first_value[c.slot];
  const int tile0 = level_.tile_of[ctx_.initial[d_]];
  const Role coordinate_role = role(RoleKind::Coordinate);
  coordinate_ =
      ctx_.program.layout().allocate(ctx_.tag(d_) + " coordinate", labels_, coordinate_role);
  mlp.begin_block(ctx_.tag(d_) + ": initial value . product now", coordinate_role);
  for (int idx = 0; idx < g.prefix_count(k - 1); ++idx) {
    const auto prefix = g.prefix_from_index(k - 1, idx);
    CombGate gate{{}, k - 1, static_cast<float>(count.max_value + 2)};
    for (int j = 0; j + 1 < k; ++j) gate.indicators.emplace_back(c.now[j][prefix[j]], 1.0f);
    add_comb_units(
        mlp, count, g.prime(k - 1),
        [&](int r) {
          auto e = prefix;
          e.push_back(r);
          return Terms{{coordinate_[first + g.element(g.from_exponents(e))[tile0]], 1.0f}};
        },
        &gate);
  }
}

// No resets: x(t) = x(0) . y(t), all in the initial value's component. With one counter the
// coordinate is a linear readout of its residue; otherwise the last comb wrote it.
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
  for (int v = 0; v < level_.width; ++v) x.indicator[v].emplace_back(coordinate_[v], 1.0f);
}

void build_counter_level(CascadeContext& ctx, int d, const KrPlan& plan, LevelAnalysis analysis) {
  CounterLevelBuilder(ctx, d, plan.levels[d], plan.counter_sum, plan.counter_block,
                      std::move(analysis))
      .build();
}

}  // namespace krc
