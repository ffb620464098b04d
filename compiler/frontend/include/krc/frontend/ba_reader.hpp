#pragma once
// RABIT's BA format (languageinclusion.org; the Büchi and NFA benchmarks of RABIT, Reduce,
// mata and ondrik/automata-benchmarks), read for finite words:
//   [0]                  (the initial state; without it, the first transition's source)
//   a,[0]->[1]           (a transition: label, source, target; brackets optional: "a,0->1")
//   b,[1]->[0]
//   [1]                  (after the transitions: the accepting states)
// One line each, spaces around the line ignored. States are named by what lies inside their
// brackets, in order of first appearance; labels are letters in order of first appearance.
// Several transitions on one label from one state make an NFA (determinised). Acceptance as
// krc reads HOA's state-based Büchi acceptance (hoa_reader.hpp): a finite word is accepted
// when a run ends in an accepting state, as if it stayed there forever (said by a note). A
// file that lists no accepting state accepts in every state (RABIT's convention for NFAs
// and transition systems; said by a note). Errors name the line.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_ba_automaton(const std::string& text, const std::string& file,
                            const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
