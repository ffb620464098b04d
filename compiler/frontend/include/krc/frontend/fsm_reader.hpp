#pragma once
// The FSM format of mCRL2 and LTSmin (mCRL2 user manual, "The FSM file format"): labelled
// transition systems in three sections separated by lines "---", and an optional fourth:
//   b(2) Bool "F" "T"        (state parameters: name, domain cardinality, sort, values)
//   ---
//   0 0                      (one line per state: its parameters' value indices; may be empty)
//   0 1
//   ---
//   1 2 "increase"           (a transition: source, target, quoted label; states from 1)
//   ---
//   1                        (optional: the initial state; default 1)
// Read as Aldebaran files are (aut_reader.hpp): labels are letters in order of first
// appearance, mCRL2's internal action "tau" is an epsilon move, every state accepts (the
// language is the system's traces). States are named by their parameters' values ("<F,1>";
// a value holding ',<>"' quoted) when every state has a line, there are parameters and the
// vectors are distinct; else by their numbers (1 to n: n is the number of state lines, or the
// highest state number when there are none). Probability
// distributions ("[2 1/2 3 1/2]") are refused. Errors name the line.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_fsm_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
