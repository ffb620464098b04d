#pragma once
// Internal header. DOT edge labels that stand for sets of letters, as the tools for temporal
// logic write them:
//   MONA, LTLf2DFA (older)  bit vectors over the tracks, 'X' a don't-care: "X0X", "1X"; several
//                           vectors on one edge separated by ',' or a line break
//   Spot, LTLf2DFA          Boolean guards over atomic propositions: "a & !b", "!a | b",
//                           "~a", "1"/"true", "0"/"false", parentheses
// The alphabet is then every valuation: 2^k bit vectors named by their bits ("010"), or the
// 2^AP valuations named by their literals ("a&!b", propositions in order of first appearance),
// as HOA's letters are. A file is read so only when every edge label reads that way and at
// least one needs it (a don't-care, an operator): labels "0" and "1" stay plain letters.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "valuations.hpp"

namespace krc::frontend {

inline constexpr std::size_t kMaxGuardPropositions = 12;  // 4,096 letters

struct LabelExpansion {
  std::string kind;                   // "bit vectors", "guards"
  std::vector<std::string> alphabet;  // every valuation, in order
  // [label]: the letters it stands for, as a table over the alphabet (bit v: letter v)
  std::vector<TruthTable> letters;
  std::string problem;  // non-empty: the labels read this way, but cannot be expanded
  std::size_t problem_label = 0;
};

// nullopt when the labels are plain letters (not all bit vectors, or none with an 'X').
std::optional<LabelExpansion> expand_bit_vectors(const std::vector<std::string>& labels);
// nullopt when the labels are plain letters (not all guards, or none with an operator).
std::optional<LabelExpansion> expand_guards(const std::vector<std::string>& labels);
// The same for labels known to be guards (mata's @NFA-bits): a guard without an operator ("x")
// is one too. nullopt when some label does not parse as one.
std::optional<LabelExpansion> expand_formulas(const std::vector<std::string>& labels);

}  // namespace krc::frontend
