#pragma once
// A light tokenizer for Graphviz DOT that keeps what Boost's parser drops: positions. It does
// not parse; the DOT reader uses it to name lines in messages, to order nodes by first mention
// and to find the opening brace.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace krc::frontend {

struct DotToken {
  // Unclosed: a string, HTML string or comment that runs to the end of the text (its text
  // says which; the token sits where it opens).
  enum Kind { Id, EdgeOp, Punct, Other, Unclosed } kind;
  std::string text;  // Id: the identifier, numeral, or unquoted string; else the characters
  std::size_t line = 1, offset = 0, index = 0;   // index: position in the token list
  enum Form { Bare, Quoted, Html } form = Bare;  // Id: how it was written (keywords are Bare)
};

// Identifiers, numerals, quoted strings (escaped quotes and line continuations resolved,
// "a" + "b" joined) and HTML strings (with their outer angle brackets, as Boost gives them)
// are Id tokens; "->" and "--" are EdgeOp; comments (//, /* */, and # lines) and backslash-
// newline pairs are skipped.
std::vector<DotToken> scan_dot(const std::string& text);

// For each node id, its first mention as a node: outside attribute lists, not next to '=',
// not a keyword or a graph's name.
std::map<std::string, const DotToken*> first_node_mentions(const std::vector<DotToken>& tokens);

}  // namespace krc::frontend
