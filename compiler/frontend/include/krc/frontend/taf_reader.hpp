#pragma once
// AutomataLib's TAF ("textual automaton format", net.automatalib.serialization.taf; LearnLib
// writes its hypotheses in it), as AutomataLib's grammar (TAF.jj) and builder read it:
//   dfa [a..d] {                      (the alphabet: a range of letters, {x, "y z", 3} or one)
//     s0 [initial, accepting] {       (options: initial/init, accepting/acc)
//       a -> s1                       (a transition; {a, b} -> s1 for several letters)
//       * -> s0                       (every letter without a transition yet)
//     }
//     s1 { b -> s0 }
//   }
//   mealy {"Hello", "?"} { q0 [initial] { "Hello" / "World" -> q1   * / "err" -> q0 } q1 {} }
// Keywords ignore case; // and /* */ comments. A state is made where it is first named (as
// a declaration or as a target); its options come from its last declaration. What
// AutomataLib reports and goes past is read as it reads it, and said by a note naming the
// line: a second initial state is not initial, a second transition on a letter is ignored
// (the first stays), a letter outside the alphabet is ignored, an unknown option is ignored.
// A dfa is an acceptor (missing transitions reject); a mealy machine's transitions carry its
// outputs; one without ('a -> q', AutomataLib's null output) outputs '' (a note says so).
// Errors name the line and column.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_taf_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
