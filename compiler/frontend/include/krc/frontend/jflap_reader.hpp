#pragma once
// JFLAP .jff finite automata: <type>fa</type> in the JFLAP 4 to 7 layouts (with or without
// the <automaton> element), also <type>mealy</type> (each transition's <transout> is its Mealy
// output) and <type>moore</type> (each state's <output> its Moore output), an empty output
// read as "λ", as JFLAP shows it (BuildOptions::outputs receives them); and JFLAP 8's nested
// <structure type="fsa"> (also "mealy_machine" and "moore_machine", read for their inputs), parsed
// by Boost.PropertyTree's XML reader after a check that elements nest at most 100 deep. An empty
// <read/> or <input/> (epsilon), two targets for one state and letter, and several <initial/>
// states make an NFA, determinised (or refused with --no-determinise). Each <read> is one letter,
// whatever its length (JFLAP would read "10" as two symbols; files that use such labels mean one).
// States are named by their "name" attributes when those are distinct, else by their ids; letters
// are listed in order of first appearance. Errors name the line.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_jflap_automaton(const std::string& text, const std::string& file,
                               const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
