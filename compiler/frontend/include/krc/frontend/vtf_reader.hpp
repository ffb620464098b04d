#pragma once
// mata's explicit NFAs in the VTF/.mata format (VeriFIT/mata; ondrik/automata-benchmarks):
//   @NFA-explicit
//   %Alphabet-auto            (other % keys than %Initial and %Final are ignored)
//   %Initial q0               (initial states, space-separated, or joined by '|')
//   %Final q4                 (final states likewise, or "!q0 & !q1": every state but those)
//   q0 a q1                   (a transition: source, symbol, target)
// '#' starts a comment. States and symbols are named as written, in order of first appearance;
// several initial states or targets make an NFA (determinised). Other sections (@NFA-bits,
// @NFA-intervals, @NFT, ...: symbolic or other automata) and files with several automata are
// refused with the reason. Errors name the line.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_vtf_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
