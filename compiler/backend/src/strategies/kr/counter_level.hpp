#pragma once
// The builder of a level whose components have solvable holonomy groups (LevelMode::Counters)
// or that resets only (LevelMode::Memory): counter_level.cpp builds the transitions and the
// counters, level_memory.cpp the memory heads and the coordinate. Internal to the kr builders.
//
// Legend: d the level, c_r the value the latest reset r wrote, y(t) = pi_1 ... pi_t the running
// product of a component's group elements, e_i its exponents (counters), x the coordinate.
#include <map>
#include <string>
#include <vector>

#include "primitives/residue.hpp"
#include "strategies/kr/cascade_context.hpp"
#include "strategies/kr/level_analysis.hpp"

namespace krc {

// One component's counters: the running product of its holonomy group as Z_p exponents.
struct ComponentCounters {
  int slot = -1;
  PolycyclicGroup group;
  std::map<Permutation, int> symbol_of;  // non-identity permutation -> symbol index
  Subspace element;                      // one-hot of the permutation at position t
  std::vector<Subspace> now;             // exponents at t (one-hots)
  std::vector<Subspace> before;          // exponents at t-1 (one-hots), where needed
};

class CounterLevelBuilder {
 public:
  CounterLevelBuilder(CascadeContext& ctx, int d, const KrLevelPlan& plan, CounterSum sum,
                      int block, LevelAnalysis analysis)
      : ctx_(ctx),
        d_(d),
        level_(ctx.dec.level(d)),
        plan_(plan),
        plan_sum_(sum),
        plan_block_(block),
        a_(std::move(analysis)),
        labels_(ctx.value_labels(d)) {}

  void build();

 private:
  void allocate_actions();
  void add_transitions();
  // The reset flag and value of position t-1, for the memory head that looks before t.
  void add_reset_fetch();
  Role role(RoleKind kind, int component = 0, int counter = 0, int step = 0) const {
    return ctx_.role(kind, d_, component, counter, step);
  }

  struct AtReset {
    const Categorical* value = nullptr;                     // the reset value
    std::vector<std::vector<const Categorical*>> counters;  // per component, per counter
  };
  AtReset add_memory_head(int shift);
  Composite coordinate_parts(const AtReset& at, int shift);
  Categorical combine(const Composite& parts, const std::string& name, int shift);
  void add_memory_and_coordinate();
  void build_counters(ComponentCounters& c);
  CombInput add_count(const ComponentCounters& c, int i, const Terms& increment);
  Terms add_next_increment(MlpOp& mlp, const ComponentCounters& c, int i,
                           const CombInput& before_count, const Categorical& element,
                           const std::vector<int>& element_of_symbol,
                           const std::vector<Subspace>& before);
  void add_fused_coordinate(MlpOp& mlp, ComponentCounters& c, const CombInput& count);
  std::string counter_name(const ComponentCounters& c, int i) const {
    return ctx_.tag(d_) + " slot " + std::to_string(c.slot + 1) + " counter " +
           std::to_string(i + 1) + " (Z" + std::to_string(c.group.prime(i)) + ")";
  }
  static std::vector<std::string> residue_labels(int p) {
    std::vector<std::string> labels;
    for (int r = 0; r < p; ++r) labels.push_back(std::to_string(r));
    return labels;
  }
  void add_coordinate_without_resets(Categorical& x);
  bool has_counters(int slot) const {
    for (const auto& c : components_)
      if (c.slot == slot) return true;
    return false;
  }

  CascadeContext& ctx_;
  const int d_;
  const Level& level_;
  const KrLevelPlan& plan_;
  const CounterSum plan_sum_;  // KrPlan::counter_sum
  const int plan_block_;       // KrPlan::counter_block
  LevelAnalysis a_;
  const std::vector<std::string> labels_;
  Subspace flag_, reset_value_;
  Subspace flag_before_, reset_value_before_;  // of position t-1 (previous_in_place)
  Subspace coordinate_;  // written by the last comb when the level has no resets
  std::vector<ComponentCounters> components_;
};

}  // namespace krc
