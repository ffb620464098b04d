#pragma once
// krc's native JSON description from text: syntax errors are reported by line and column,
// everything after that by JSON pointer (automaton_json.hpp checks the document).
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

// `default_name` names the automaton when the document has no "name".
Automaton read_json_automaton(const std::string& text, const std::string& file,
                              const std::string& default_name,
                              const CompletionOptions& options = {});

}  // namespace krc
