#pragma once
// Strategy `kr`: the holonomy (Krohn-Rhodes) cascade as a transformer whose depth does not
// grow with the input length (Liu et al., Theorem 2). Per level, in the residual stream:
//   transitions  the letter and the upper levels' coordinates at t-1 select the level's action:
//                a reset (flag + value) or a permutation of a slot's tiles (a group element);
//   counters     for each slot with a solvable holonomy group, the running group product as a
//                cascade of Z_p counters (prefix-sum head + residue MLP each, polycyclic
//                coordinates);
//   memory       the latest reset (a flip-flop head) with its value and the counters there;
//   coordinate   reset value . product since the reset, as a one-hot over the level's values;
//   previous     the coordinate at t-1, fetched for the levels below.
// A level with a non-solvable group is computed by a parallel prefix over its own
// transformations (depth log T, as Theorem 4 says it must be unless TC0 = NC1).
// Finally the coordinates are decoded into the automaton's state. A cascade of memory units
// only (aperiodic automata) is built differently, in one layer per level: see
// KrOptions::time_shifted_memory.
#include <string>
#include <vector>

#include "krc/holonomy.hpp"
#include "krc/program.hpp"

namespace krc {

struct KrLevelPlan {
  int level = 0;  // 1-based, as printed
  // "counters" (Z_p counters, and a memory unit if it resets), "memory" (resets only: a
  // memory unit), "scan" (a parallel prefix: the group is not solvable or too large) or
  // "constant" (no letter ever changes the level's value)
  std::string mode;
  bool resets = false;                     // the level has reset actions (a memory unit)
  std::vector<int> tiles;                  // per slot: number of tiles
  std::vector<std::string> groups;         // per slot: holonomy group name
  std::vector<std::vector<int>> counters;  // per slot: counter moduli, top first
};

struct KrOptions {
  // Slots whose holonomy group is larger are computed by a scan instead of counters (the
  // lookups that combine counters grow with the square of the order).
  int max_counter_group_order = 720;
  // A cascade made only of memory units (aperiodic, trivial holonomy groups: gridworld,
  // flip-flops) is built with every level also computed at the earlier times the levels
  // below need, in levels + 1 layers instead of about two per level.
  bool time_shifted_memory = true;
};

Program kr_program(const HolonomyDecomposition& decomposition, int max_len,
                   const KrOptions& options, std::vector<KrLevelPlan>* plan = nullptr);

}  // namespace krc
