#pragma once
// A clamped walk on a path of n cells (krc/backend/plan.hpp's WalkPlan; Liu et al. 2023, Theorem
// 3): gridworld and its kin, in two layers whatever n and the length. What the planner and the two
// builders share: how a letter's clamp map unfolds into single-cell moves, and which classes mod n
// such a letter leaves, in which direction.
//
// Legend: n cells, M = n - 1 the top cell, a letter maps cell c to clamp(c + shift, low, high),
// S the running sum of the letters' steps, a class is a residue mod n of S.
#include <optional>
#include <string>
#include <vector>

#include "ir/program.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/backend/plan.hpp"

namespace krc {

// The letter as single-cell moves (+1 or -1, each clamped to [0, M]) that map every cell as
// the letter does: L^a R^b L^c or its mirror R^a L^b R^c (a constant map c: R^(M-c) L^M R^c).
// Their sum is the letter's shift (0 for a constant map).
std::vector<int> unit_moves(const WalkLetter& letter, int cells);

// Which classes the moves leave last in which direction, relative to the class they end in:
// entry o (0 <= o < n) is +1 when class (end + o) mod n was last left upwards, -1 downwards,
// 0 when the moves never leave it.
std::vector<int> departures(const WalkLetter& letter, int cells);

// The walk's plan without its depth (plan_clamped_walk asks the scheduler for that).
std::optional<WalkPlan> recognise_clamped_walk(const Automaton& automaton, int max_len);

// The network (clamped_walk.cpp, and walk_departures.cpp for WalkForm::Departures).
Program build_clamped_walk(const Automaton& automaton, const WalkPlan& walk);

}  // namespace krc
