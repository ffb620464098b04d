#pragma once
// krc's native JSON description of a semiautomaton (see README, "Input formats"):
//   {"name", "states": [...], "alphabet": [...], "initial", "transitions": {letter: [target
//    of states[i], by name or index]}, optional "accepting", "description"}
// Also the form the weights file carries in its "automaton" metadata.
#include <nlohmann/json.hpp>
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

// Errors name `file` and the JSON pointer of the offending value. A null or missing target
// makes the automaton partial: an error unless options.add_sink.
Automaton automaton_from_json(const nlohmann::json& document, const std::string& file,
                              const CompletionOptions& options = {});

// Targets by name, keys in alphabet order; round-trips through automaton_from_json.
nlohmann::json automaton_to_json(const Automaton& automaton);

// The same document as text, members in the order name, description, states, alphabet,
// initial, transitions (letters in alphabet order), accepting, indented by `indent` spaces
// per level (1: the layout of the reference files), ending with a newline.
std::string automaton_to_json_text(const Automaton& automaton, int indent = 1);

}  // namespace krc
