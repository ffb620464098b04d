#pragma once
// Internal header. The HOA v1 grammar (https://adl.github.io/hoaf/, "Common Tokens", "Header",
// "Body"), read into one record that hoa_reader.cpp turns into an automaton. Labels are read
// as Guards, the truth table of the label over every valuation of the atomic propositions, so
// that aliases, however deeply they refer to each other, cost one table each and nothing is
// evaluated twice; acceptance conditions as a tree whose And/Or nodes hold all their operands
// (a chain Inf(0)&Inf(1)&... is one node), so that evaluating one recurses no deeper than the
// parentheses, which nest at most kMaxHoaNesting deep.
//
// Hostile input: numbers are below 2^31 (the format's INT), parentheses and '!' nest at most
// kMaxHoaNesting deep, comments nest to any depth (a counter, no recursion), there are at most
// kMaxHoaPropositions atomic propositions (a Guard has 2^AP bits), and the edges' tables are
// counted against the memory budget as they are read.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton_builder.hpp"

namespace krc::frontend {

inline constexpr std::size_t kMaxHoaPropositions = 12;  // 4,096 letters
inline constexpr std::size_t kMaxHoaNesting = 100;

// Bit v of the table is the label's value under valuation v (proposition j true when bit j of
// v is set), for v < 2^AP.
struct Guard {
  std::vector<std::uint64_t> bits;
  bool holds(std::uint32_t valuation) const { return bits[valuation / 64] >> (valuation % 64) & 1; }
};

// A positive Boolean formula over Fin(i), Fin(!i), Inf(i), Inf(!i), t and f.
struct HoaAcceptance {
  enum class Kind { True, False, Inf, Fin, And, Or };
  struct Node {
    Kind kind = Kind::True;
    bool complement = false;  // Inf(!i), Fin(!i)
    std::uint32_t set = 0;
    std::vector<std::size_t> operands;  // And, Or
  };
  std::vector<Node> nodes;  // nodes[root] is the condition
  std::size_t root = 0;
  std::string text;  // as written, for messages

  // Whether the condition holds for a run that stays forever on something in exactly the
  // acceptance sets `marks` (sorted): Inf(i) and Fin(!i) when i is a mark, Fin(i) and Inf(!i)
  // when it is not.
  bool holds(const std::vector<std::uint32_t>& marks) const;
};

struct HoaEdge {
  std::optional<Guard> label;  // none: an implicit label (or the state's label)
  std::uint32_t target = 0;
  std::vector<std::uint32_t> marks;  // sorted, distinct
  std::size_t line = 0;
};

struct HoaState {
  std::uint32_t id = 0;
  std::optional<Guard> label;
  std::optional<std::string> name;
  std::vector<std::uint32_t> marks;  // sorted, distinct
  std::vector<HoaEdge> edges;
  std::size_t line = 0;
};

struct HoaAutomaton {
  std::string name;  // name: "", or ""
  std::optional<std::uint32_t> declared_states;
  std::vector<std::uint32_t> starts;  // each Start: item (a conjunction is refused)
  std::vector<std::size_t> start_lines;
  std::vector<std::string> propositions;
  std::uint32_t acceptance_sets = 0;
  HoaAcceptance acceptance;
  std::vector<HoaState> states;              // in body order
  std::vector<std::string> ignored_headers;  // upper-case header items krc does not know
};

// Parses the first automaton of `text`; every problem is an InputError through `b` naming the
// line.
HoaAutomaton parse_hoa(const std::string& text, const AutomatonBuilder& b);

}  // namespace krc::frontend
