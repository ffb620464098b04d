#pragma once
// Internal header. DOT files whose edge labels say they are no finite automaton, refused as
// what they are before a letter-per-label reading turns them into nonsense letters.
#include <string>
#include <vector>

#include "krc/automata/automaton_builder.hpp"

namespace krc::frontend {

// Refuses, at the label that shows it: a probabilistic file (every label "d:0.9", "a/x:0.5" or
// "0.5", some probability strictly between 0 and 1: an AALpy MDP, stochastic Mealy machine or
// Markov chain) and AALpy's pushdown automata ("( / push(()", ") / pop(()").
void refuse_other_machines(const AutomatonBuilder& b, const std::vector<std::string>& labels,
                           const std::vector<std::string>& places);

}  // namespace krc::frontend
