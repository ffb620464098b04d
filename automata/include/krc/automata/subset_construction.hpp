#pragma once
// Determinising an NFA (several targets for one state and letter, epsilon transitions) by the
// subset construction from its initial state, as JFLAP and every textbook do it. Only subsets
// reachable from the initial states' epsilon closure are made; the empty subset, when reached,
// is the dead state "{}". A subset is accepting when it holds an accepting state.
//
// Hostile input: the construction can make 2^n subsets. It stops with a LimitError before it
// makes more than `max_states` of them, and before the subsets' names, members and rows
// would exceed the memory budget (memory_budget.hpp), each estimated before it is allocated.
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc {

struct Nfa {
  std::string name, description;
  std::vector<std::string> states, letters;
  std::vector<std::vector<std::vector<StateId>>> targets;  // [letter][state]: every target
  std::vector<std::vector<StateId>> epsilon;               // [state]: epsilon targets
  StateId initial = 0;
  std::vector<StateId> also_initial;  // further initial states (HOA's several Start:, DOT's
                                      // several __start markers): the first subset holds all
  std::vector<StateId> accepting;
};

// The subset automaton's states are named "{q0,q2}" after their members, in the order the
// construction reaches them (the initial closure first).
Automaton determinise(const Nfa& nfa, std::size_t max_states);

}  // namespace krc
