#pragma once
// What the action tables say about one level of the cascade, read once and shared by the
// planner (which decides the level's mode) and the builders (which need the permutations and
// the polycyclic groups themselves).
//
// Legend: d a level (0-based), x0 the level's initial value (the encoding of the automaton's
// initial state), a slot is one component (a representative's tiles).
#include <optional>
#include <vector>

#include "krc/backend/plan.hpp"
#include "krc/decompose/holonomy.hpp"
#include "primitives/polycyclic_group.hpp"

namespace krc {

struct LevelAnalysis {
  bool resets = false;
  // Per slot: the distinct non-identity permutations some action applies, in table order.
  std::vector<std::vector<Permutation>> permutations;
  // Per slot: whether its running product matters. Every slot when the level resets;
  // otherwise only the initial value's slot (without resets the value never leaves it).
  std::vector<bool> active;
  // Per slot: the group its permutations generate as Z_p counters, when the slot is active,
  // has permutations, and the group is solvable and small enough.
  std::vector<std::optional<PolycyclicGroup>> groups;
  // An active slot with permutations whose group has no counters: the level needs a scan.
  bool needs_scan = false;
  int initial = -1;  // x0
};

LevelAnalysis analyze_level(const HolonomyDecomposition& decomposition, int d,
                            const KrOptions& options);

// The mode the analysis calls for (Scan, Constant, Memory or Counters).
LevelMode mode_of(const LevelAnalysis& analysis);

}  // namespace krc
