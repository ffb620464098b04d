#include "dot_syntax.hpp"

#include <cctype>

#include "text.hpp"

namespace krc::frontend {

namespace {

// Thrown inside the checker only; check_dot_syntax turns it into its result.
struct Stop {
  DotSyntaxError error;
};

// Recursive descent over the grammar Boost's read_graphviz implements:
//   graph     : [strict] (graph | digraph) [ID] '{' stmt_list '}' <end>
//   stmt_list : { stmt [';'] }
//   stmt      : (graph | node | edge) attr_list | ID '=' ID | subgraph | ID [port] [attr_list]
//               | endpoint edge_rhs
//   endpoint  : subgraph | ID [port]
//   subgraph  : [subgraph [ID]] '{' stmt_list '}'  |  subgraph ID
//   edge_rhs  : ('->' | '--') endpoint { ('->' | '--') endpoint } [attr_list]
//   attr_list : { '[' { ID ['=' ID] [',' | ';'] } ']' }
//   port      : { ':' ID [':' ID] | ':' '(' ID ',' ID ')' | '@' ID }
// The only recursion is through subgraphs, and `depth_` stops it at kMaxDotNesting.
class Checker {
 public:
  explicit Checker(const std::vector<DotToken>& tokens, std::vector<std::size_t>& anonymous)
      : t_(tokens), anonymous_(anonymous) {}

  void graph() {
    if (keyword("strict")) ++i_;
    if (!keyword("graph") && !keyword("digraph")) fail("expected 'digraph' or 'graph'");
    directed_ = keyword("digraph");
    ++i_;
    if (id() && !is_punct("{")) ++i_;
    block();
    if (i_ < t_.size()) fail("expected the end of the file after the graph's closing '}'");
  }

 private:
  bool at_end() const { return i_ >= t_.size(); }
  bool is_punct(const char* p) const {
    return !at_end() && t_[i_].kind == DotToken::Punct && t_[i_].text == p;
  }
  bool is_other(char c) const {
    return !at_end() && t_[i_].kind == DotToken::Other && t_[i_].text[0] == c;
  }
  bool keyword(const char* word) const {
    return !at_end() && t_[i_].kind == DotToken::Id && t_[i_].form == DotToken::Bare &&
           lowercase(t_[i_].text) == word;
  }
  // An identifier that is not a keyword (keywords are bare words, in any case).
  bool id() const {
    if (at_end() || t_[i_].kind != DotToken::Id) return false;
    if (t_[i_].form != DotToken::Bare) return true;
    const std::string word = lowercase(t_[i_].text);
    return word != "strict" && word != "graph" && word != "digraph" && word != "node" &&
           word != "edge" && word != "subgraph";
  }
  void expect_id(const char* what) {
    if (!id()) fail(std::string("expected ") + what);
    ++i_;
  }

  [[noreturn]] void fail(const std::string& expected) const {
    if (at_end()) {
      const std::size_t line = t_.empty() ? 1 : t_.back().line;
      throw Stop{{line, expected + ", found the end of the file"}};
    }
    const DotToken& token = t_[i_];
    if (token.kind == DotToken::Unclosed)
      throw Stop{{token.line, "a " + token.text + " that is never closed"}};
    std::string found = token.text.size() > 40 ? token.text.substr(0, 40) + "..." : token.text;
    throw Stop{{token.line, expected + ", found '" + found + "'"}};
  }

  void block() {
    if (!is_punct("{")) fail("expected '{'");
    if (++depth_ > kMaxDotNesting)
      throw Stop{{t_[i_].line, "braces nested more than " + std::to_string(kMaxDotNesting) +
                                   " deep (krc's limit for DOT subgraphs)"}};
    ++i_;
    while (!is_punct("}")) {
      statement();
      if (is_punct(";")) ++i_;
    }
    ++i_;
    --depth_;
  }

  void statement() {
    if (keyword("graph") || keyword("node") || keyword("edge")) {
      ++i_;
      if (!is_punct("[")) fail("expected '[' after '" + t_[i_ - 1].text + "'");
      attributes();
      return;
    }
    if (id() && i_ + 1 < t_.size() && t_[i_ + 1].kind == DotToken::Punct &&
        t_[i_ + 1].text == "=") {
      i_ += 2;
      expect_id("a value after '='");
      return;
    }
    if (!id() && !keyword("subgraph") && !is_punct("{"))
      fail("expected a statement (a node, an edge, a subgraph or an attribute) or '}'");
    bool lone_subgraph = endpoint();
    while (!at_end() && t_[i_].kind == DotToken::EdgeOp) {
      if (directed_ != (t_[i_].text == "->"))
        fail(directed_ ? "expected '->' in a digraph" : "expected '--' in an undirected graph");
      ++i_;
      if (!id() && !keyword("subgraph") && !is_punct("{")) fail("expected a node or a subgraph");
      endpoint();
      lone_subgraph = false;
    }
    // Nodes and edges take attributes; a subgraph statement does not (as in Boost).
    if (is_punct("[") && !lone_subgraph) attributes();
  }

  // True for a subgraph, false for a node.
  bool endpoint() {
    const bool keyword_first = keyword("subgraph");
    if (keyword_first) {
      ++i_;
      const bool named = id();
      if (named) ++i_;
      if (!is_punct("{")) {
        if (!named) fail("expected a subgraph name or '{'");
        return true;  // a reference to a named subgraph
      }
    }
    if (is_punct("{")) {
      if (!keyword_first) anonymous_.push_back(i_);
      block();
      return true;
    }
    ++i_;  // the node's identifier
    port();
    return false;
  }

  // At most one angle (@a) and one position (:p, :p:c or :(x,y)), in either order (Boost).
  void port() {
    bool angle = false, position = false;
    for (;;) {
      if (is_other('@')) {
        if (angle) fail("a node has one port angle, found a second '@'");
        angle = true;
        ++i_;
        expect_id("a port angle after '@'");
      } else if (is_punct(":")) {
        if (position) fail("a node has one port, found a second ':'");
        position = true;
        ++i_;
        if (is_other('(')) {
          ++i_;
          expect_id("a port position");
          if (!is_punct(",")) fail("expected ',' in a port position");
          ++i_;
          expect_id("a port position");
          if (!is_other(')')) fail("expected ')' to close a port position");
          ++i_;
          continue;
        }
        expect_id("a port name after ':'");
        if (is_punct(":")) {
          ++i_;
          expect_id("a compass point after ':'");
        }
      } else {
        return;
      }
    }
  }

  void attributes() {
    while (is_punct("[")) {
      ++i_;
      while (!is_punct("]")) {
        expect_id("an attribute name or ']'");
        if (is_punct("=")) {
          ++i_;
          expect_id("an attribute value after '='");
        }
        if (is_punct(",") || is_punct(";")) ++i_;
      }
      ++i_;
    }
  }

  const std::vector<DotToken>& t_;
  std::vector<std::size_t>& anonymous_;
  std::size_t i_ = 0;
  int depth_ = 0;
  bool directed_ = true;
};

// Boost's tokenizer rejects what the scanner lets through as single characters, numerals
// without a digit ("-", "."), and non-ASCII bytes outside quotes.
std::optional<DotSyntaxError> lexical_problem(const std::vector<DotToken>& tokens) {
  for (const auto& t : tokens) {
    if (t.kind == DotToken::Unclosed)
      return DotSyntaxError{t.line, "a " + t.text + " that is never closed"};
    if (t.kind == DotToken::Other && std::string("()@").find(t.text[0]) == std::string::npos)
      return DotSyntaxError{t.line, "unexpected character '" + t.text + "'"};
    if (t.kind != DotToken::Id || t.form != DotToken::Bare) continue;
    bool digit = false, non_ascii = false;
    for (unsigned char c : t.text) {
      digit = digit || std::isdigit(c);
      non_ascii = non_ascii || c >= 0x80;
    }
    const unsigned char first = static_cast<unsigned char>(t.text[0]);
    if ((first == '-' || first == '.' || std::isdigit(first)) && !digit)
      return DotSyntaxError{t.line, "'" + t.text + "' is not a number"};
    if (non_ascii)
      return DotSyntaxError{t.line, "a non-ASCII identifier must be quoted: '" + t.text + "'"};
  }
  return std::nullopt;
}

}  // namespace

DotSyntax check_dot_syntax(const std::vector<DotToken>& tokens) {
  DotSyntax result;
  try {
    Checker(tokens, result.anonymous_subgraphs).graph();
  } catch (const Stop& stop) {
    // A lexical problem earlier in the file explains the grammar error better.
    auto lexical = lexical_problem(tokens);
    result.error = lexical && lexical->line <= stop.error.line ? *lexical : stop.error;
    return result;
  }
  result.error = lexical_problem(tokens);
  return result;
}

}  // namespace krc::frontend
