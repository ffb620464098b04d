#pragma once
// Internal header. A check of the Graphviz DOT grammar over the scanner's tokens, run before
// Boost's read_graphviz sees the text: Boost's parser recurses once per nested '{' (20,000
// levels overflow the stack) and its messages carry no position. This check bounds the
// nesting first, then names the line of the first token the grammar does not allow, in one
// pass. It accepts what Boost accepts for the files krc reads (graph, digraph, strict,
// subgraphs, attribute statements, a = b, ports, edge chains, HTML strings).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dot_scanner.hpp"

namespace krc::frontend {

// Braces (graph bodies and subgraphs) nest at most this deep (README, "Input formats").
inline constexpr int kMaxDotNesting = 100;

struct DotSyntaxError {
  std::size_t line;
  std::string problem;
};

struct DotSyntax {
  std::optional<DotSyntaxError> error;
  // Token indices of the '{' of subgraphs written without the keyword ("a -> {b c}"):
  // Boost 1.74 wants "subgraph {" there (it takes the brace for the keyword and then asks for
  // another), so the reader writes the keyword in before handing the text over.
  std::vector<std::size_t> anonymous_subgraphs;
};

DotSyntax check_dot_syntax(const std::vector<DotToken>& tokens);

}  // namespace krc::frontend
