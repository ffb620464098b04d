#pragma once
// The parsed form of a regular expression (regex_reader.hpp): a tree over letter sets, with
// the alphabet it is read over. regex_parser.cpp writes it; regex_automaton.cpp turns it into
// an NFA.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc::frontend {

struct RegexNode {
  enum class Kind { Empty, Letters, Concat, Alternation, Repeat };
  Kind kind = Kind::Empty;
  // Letters: one letter of this set (sorted, distinct), or with `negated` one letter outside
  // it (`.` is the negated empty set): the complement needs the whole alphabet, known only
  // once the whole pattern is read.
  std::vector<LetterId> letters;
  bool negated = false;
  std::vector<RegexNode> children;  // Concat, Alternation: in order; Repeat: the operand
  std::size_t min = 0, max = 0;     // Repeat: {min,max}, max unused when unbounded
  bool unbounded = false;
};

struct ParsedRegex {
  RegexNode root;
  std::vector<std::string> alphabet;  // the declared one, or the letters the pattern names
};

// Parses `pattern`; `alphabet` nullopt: the alphabet is the letters the pattern names. An
// InputError names `source` and the column (in characters, from 1) of the problem.
ParsedRegex parse_regex(const std::string& pattern,
                        const std::optional<std::vector<std::string>>& alphabet,
                        const std::string& source);

}  // namespace krc::frontend
