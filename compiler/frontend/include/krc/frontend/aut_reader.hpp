#pragma once
// Aldebaran .aut labelled transition systems (CADP, mCRL2's ltsconvert, LTSmin's .aut output):
//   des (0, 3, 2)             (the initial state, the number of transitions, of states)
//   (0, "send(1)", 1)         (a transition: from, label, to; states are 0 .. n - 1)
//   (1, i, 0)                 (labels quoted or bare)
// Each label is a letter, in order of first appearance; the internal action, CADP's `i` and
// mCRL2's `tau`, is an epsilon move (what an observer of the system sees: its traces), so a
// file with one is an NFA, determinised. Every state accepts: the language is the system's
// traces, and a word that leaves them is rejected (a missing transition). States are named by
// their numbers. Errors name the line.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_aut_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
