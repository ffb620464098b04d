#include "strategies/kr/level_analysis.hpp"

#include <algorithm>

namespace krc {

LevelAnalysis analyze_level(const HolonomyDecomposition& decomposition, int d,
                            const KrOptions& options) {
  const Level& level = decomposition.level(d);
  const std::size_t slots = level.slots.size();
  LevelAnalysis a;
  a.permutations.resize(slots);
  a.active.assign(slots, false);
  a.groups.resize(slots);
  a.initial = decomposition.encode(decomposition.automaton().initial())[d];
  for (const auto& row : decomposition.table(d).action)
    for (const auto& act : row) {
      if (act.reset) {
        a.resets = true;
      } else if (!perm::is_identity(act.permutation)) {
        auto& list = a.permutations[act.slot];
        if (std::find(list.begin(), list.end(), act.permutation) == list.end())
          list.push_back(act.permutation);
      }
    }
  for (std::size_t s = 0; s < slots; ++s) {
    a.active[s] =
        a.resets || (a.initial != level.dummy && level.slot_of[a.initial] == static_cast<int>(s));
    if (!a.active[s] || a.permutations[s].empty()) continue;
    a.groups[s] =
        PolycyclicGroup::build(a.permutations[s], static_cast<int>(level.slots[s].tiles.size()),
                               static_cast<std::size_t>(options.max_counter_group_order));
    if (!a.groups[s]) a.needs_scan = true;
  }
  return a;
}

LevelMode mode_of(const LevelAnalysis& analysis) {
  if (analysis.needs_scan) return LevelMode::Scan;
  const bool any_group =
      std::any_of(analysis.groups.begin(), analysis.groups.end(),
                  [](const std::optional<PolycyclicGroup>& g) { return g.has_value(); });
  if (any_group) return LevelMode::Counters;
  return analysis.resets ? LevelMode::Memory : LevelMode::Constant;
}

}  // namespace krc
