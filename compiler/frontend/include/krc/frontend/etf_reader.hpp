#pragma once
// LTSmin's ETF ("enumerated table format", LTSmin's etf(5) man page; ltsmin-grammar.lemon and
// etf-pins.c are its reference reader): a state vector of typed slots, edge labels, one initial
// vector and transition sections, one per group:
//   begin state                 the slots, name:sort ("_" for none)
//   shape:shape mult:mult
//   end state
//   begin edge                  the edge labels, name:sort (may be none)
//   action:action
//   end edge
//   begin init                  one value per slot: an index, or an inline "value"
//   0 0
//   end init
//   begin trans                 a group: per slot '*' (untouched) or 'from/to', then one value
//   0/1 * 1                     per edge label
//   end trans
//   begin sort action           the values of a sort, in index order ("..." or #hex#)
//   "a"
//   "b"
//   end sort
//   begin map name:sort ... end map   (state labels: skipped)
// Comments run from '%' to the line's end. Read as LTSmin explores it: the states are the
// vectors reachable from the initial one (at most kMaxEtfStates, else refused), every state
// accepting (the language is the system's traces, as for .aut and .fsm). The letters are the
// values of one edge label: the one named by `label` (--etf-label, Python's etf_label; a name
// the file does not declare is an error that lists those it does), else the only one, else the
// first whose sort or name begins with "action" (LTSmin's action label), else the first (a note
// says which); with no edge labels,
// the groups ("group0", ... in LTSmin's numbering: empty sections are not groups). The action
// "tau" is an epsilon move (LTSmin's silent step). States are named by their vectors, each value
// as its sort spells it ("<0,single>"). Errors name the line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

// Bounds on what krc explores: states reachable from the initial one, slots of the state
// vector and edge labels (LTSmin's models have tens of slots and a few labels).
inline constexpr std::uint32_t kMaxEtfStates = std::uint32_t{1} << 20;
inline constexpr std::size_t kMaxEtfSlots = 4096;
inline constexpr std::size_t kMaxEtfLabels = 64;

// The explicit transition system of an ETF file, before it becomes an automaton.
struct EtfSystem {
  std::vector<std::string> states;   // states[0] is the initial one
  std::vector<std::string> letters;  // in order of first appearance
  struct Edge {
    std::uint32_t from, letter, to;
  };
  std::vector<Edge> edges;          // distinct (from, letter, to) triples
  std::string letters_from;         // the edge label named "action", ...; "" = the groups
  std::vector<std::string> labels;  // all edge label names
};

// At most `max_states` states are explored (more: an InputError at the init section's line).
// `label`: the edge label whose values are the letters ("": chosen as above).
EtfSystem read_etf_system(const std::string& text, const std::string& file,
                          std::uint32_t max_states = kMaxEtfStates, const std::string& label = "");

Automaton read_etf_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {},
                             const std::string& label = "");

}  // namespace krc
