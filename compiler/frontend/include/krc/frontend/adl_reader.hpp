#pragma once
// Stamina's ADL ("automaton description language": the StaMinA competition's and the Stamina
// toolkit's automaton files; Stamina::ADL.parse_automaton, lib/stamina-core/stamina/adl.rb, is
// its reference reader):
//   # a comment ('#' to the line's end, anywhere)
//   2 3                  state_count edge_count
//   0 true false         a state: identifier, initial, accepting (then an optional error flag)
//   1 false true
//   0 1 a                an edge: source, target, symbol (one word each)
//   1 0 b
//   1 1 b
// Exactly state_count state lines, then exactly edge_count edge lines; nothing after them.
// States keep their identifiers (any word), letters are the symbols in order of first
// appearance. The output is acceptance, as Stamina's own `accepts?` reads it: a word is
// accepted when a run ends in a state that is accepting and not an error state. Several
// initial states or several edges on one symbol from one state make an NFA (determinised, as
// Stamina's `determinize` does); a missing transition rejects from there on (a partial acceptor
// is completed with a rejecting sink). Errors name the line.
#include <cstdint>
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

// The most states and edges a header may announce (each needs its own line as well).
inline constexpr std::uint32_t kMaxAdlCount = std::uint32_t{1} << 26;

Automaton read_adl_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
