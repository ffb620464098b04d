#pragma once
// The state graph of an automaton (an edge q -> delta(q, a) for every state and letter):
// what is reachable from the initial state, the strongly connected components and the sink
// components (those no edge leaves). `krc info` reports these; unreachable states usually
// mean a mistake in a description file.
#include <cstddef>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc {

struct StateGraphAnalysis {
  std::vector<bool> reachable;  // per state: reachable from the initial state
  std::size_t reachable_count = 0;
  bool all_reachable = false;
  // Strongly connected components, numbered by their smallest state; each lists its states
  // in increasing order.
  std::vector<std::size_t> component_of;  // per state
  std::vector<std::vector<StateId>> components;
  std::vector<std::size_t> sink_components;  // components no edge leaves, increasing
};

StateGraphAnalysis analyze_state_graph(const Automaton& automaton);

// The states reachable from `from` (including it), in increasing order.
std::vector<StateId> reachable_states(const Automaton& automaton, StateId from);

}  // namespace krc
