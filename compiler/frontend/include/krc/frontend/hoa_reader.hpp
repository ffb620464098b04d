#pragma once
// Hanoi Omega-Automata (HOA v1, https://adl.github.io/hoaf/) as Spot, Owl, ltl2dstar and
// Seminator write it, read for finite words:
//   HOA: v1
//   States: 2
//   Start: 0                         (several Start: items: an NFA with all of them)
//   AP: 2 "a" "b"
//   Acceptance: 1 Inf(0)
//   --BODY--
//   State: 0 {0}                     (a state in acceptance set 0)
//     [0 & !1] 1                     (an edge guarded by a & !b; implicit labels also read)
//   State: 1
//     [t] 1 {0}                      (an edge in acceptance set 0)
//   --END--
// The alphabet is every valuation of the atomic propositions, 2^AP letters named by the
// conjunction of their literals ("a&!b", AP 0 first; "t" when there are none), in the order of
// HOA's implicit labels (AP j is bit j of the letter's number); at most 12 propositions. A
// guard is read as the set of valuations that satisfy it, one transition per valuation, so
// overlapping guards make an NFA. A finite word is accepted when its run ends in a state
// whose acceptance sets, together with those of the edge that entered it, satisfy the
// Acceptance: condition (Inf(i) and Fin(!i): the set i is among them; Fin(i) and Inf(!i): it
// is not), as if the run stayed there forever: Spot's reading of finite automata (state-based
// Büchi, Inf(0)). States are named by their numbers, or by their names when every state has a
// distinct one. Universal branching (alternating automata), --ABORT-- and streams of several
// automata are refused with the reason. Errors name the line.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_hoa_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
