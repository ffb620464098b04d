#include "hoa_syntax.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "valuations.hpp"

namespace krc::frontend {

bool HoaAcceptance::holds(const std::vector<std::uint32_t>& marks) const {
  // Recurses once per parenthesis level (at most kMaxHoaNesting), not per operand.
  auto eval = [&](auto&& self, std::size_t i) -> bool {
    const Node& n = nodes[i];
    switch (n.kind) {
      case Kind::True:
        return true;
      case Kind::False:
        return false;
      case Kind::Inf:
      case Kind::Fin: {
        const bool in = std::binary_search(marks.begin(), marks.end(), n.set);
        return (n.kind == Kind::Inf) != n.complement ? in : !in;
      }
      case Kind::And:
        return std::all_of(n.operands.begin(), n.operands.end(),
                           [&](std::size_t k) { return self(self, k); });
      case Kind::Or:
        return std::any_of(n.operands.begin(), n.operands.end(),
                           [&](std::size_t k) { return self(self, k); });
    }
    return false;
  };
  return eval(eval, root);
}

namespace {

struct Token {
  enum class Kind { HeaderName, Ident, Int, String, AName, Punct, Body, End, Abort, Eof };
  Kind kind = Kind::Eof;
  std::string text;         // a header name without its ':', a string's decoded value
  std::uint32_t value = 0;  // Int
  std::size_t line = 1, offset = 0, end = 0;
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) {
  // HOA 1.1 also allows '.', which Spot writes in its own header names (spot.highlight.edges).
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::HeaderName:
      return "'" + t.text + ":'";
    case Token::Kind::String:
      return "a string";
    case Token::Kind::Body:
      return "--BODY--";
    case Token::Kind::End:
      return "--END--";
    case Token::Kind::Abort:
      return "--ABORT--";
    case Token::Kind::Eof:
      return "the end of the file";
    default:
      return "'" + t.text + "'";
  }
}

class Lexer {
 public:
  Lexer(const std::string& text, const AutomatonBuilder& b) : s_(text), b_(b) {}

  struct Position {
    std::size_t pos, line;
  };
  Position position() const { return {pos_, line_}; }
  void seek(Position p) { pos_ = p.pos, line_ = p.line; }

  Token next() {
    skip_space_and_comments();
    Token t;
    t.line = line_;
    t.offset = pos_;
    if (pos_ >= s_.size()) return finish(t, Token::Kind::Eof);
    const char c = s_[pos_];
    for (const auto& [marker, kind] :
         {std::pair{"--BODY--", Token::Kind::Body}, std::pair{"--END--", Token::Kind::End},
          std::pair{"--ABORT--", Token::Kind::Abort}})
      if (s_.compare(pos_, std::char_traits<char>::length(marker), marker) == 0) {
        t.text = marker;
        pos_ += t.text.size();
        return finish(t, kind);
      }
    if (ident_start(c)) {
      const std::size_t start = pos_;
      while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
      t.text = s_.substr(start, pos_ - start);
      if (pos_ < s_.size() && s_[pos_] == ':') {
        ++pos_;
        return finish(t, Token::Kind::HeaderName);
      }
      return finish(t, Token::Kind::Ident);
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::uint64_t value = 0;
      const std::size_t start = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        value = value * 10 + static_cast<std::uint64_t>(s_[pos_] - '0');
        if (value >= (std::uint64_t{1} << 31))
          b_.fail(line_place(line_), "the number '" + s_.substr(start, 12) +
                                         "...' is too large (HOA numbers are below 2^31)");
        ++pos_;
      }
      t.text = s_.substr(start, pos_ - start);
      t.value = static_cast<std::uint32_t>(value);
      return finish(t, Token::Kind::Int);
    }
    if (c == '"') return finish(string_token(t), Token::Kind::String);
    if (c == '@') {
      const std::size_t start = pos_++;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                  s_[pos_] == '_' || s_[pos_] == '-'))
        ++pos_;
      if (pos_ == start + 1) b_.fail(line_place(line_), "'@' without an alias name after it");
      t.text = s_.substr(start, pos_ - start);
      return finish(t, Token::Kind::AName);
    }
    if (std::string("[]{}()!&|").find(c) != std::string::npos) {
      t.text = std::string(1, c);
      ++pos_;
      return finish(t, Token::Kind::Punct);
    }
    const unsigned char u = static_cast<unsigned char>(c);
    b_.fail(line_place(line_), u >= 0x20 && u < 0x7F
                                   ? "unexpected character '" + std::string(1, c) + "'"
                                   : "unexpected byte " + std::to_string(u));
  }

 private:
  Token finish(Token& t, Token::Kind kind) {
    t.kind = kind;
    t.end = pos_;
    return std::move(t);
  }

  // Whitespace and /* comments */, which nest ("/*a/*b*/c*/" is one comment).
  void skip_space_and_comments() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\n') {
        ++line_, ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (s_.compare(pos_, 2, "/*") == 0) {
        const std::size_t start_line = line_;
        std::size_t depth = 0;
        do {
          if (pos_ >= s_.size()) b_.fail(line_place(start_line), "a comment '/*' that never ends");
          if (s_.compare(pos_, 2, "/*") == 0) {
            ++depth, pos_ += 2;
          } else if (s_.compare(pos_, 2, "*/") == 0) {
            --depth, pos_ += 2;
          } else {
            if (s_[pos_] == '\n') ++line_;
            ++pos_;
          }
        } while (depth > 0);
      } else {
        return;
      }
    }
  }

  // A C-like string: \" and \\ stand for " and \, any other escape is kept as written.
  Token& string_token(Token& t) {
    const std::size_t start_line = line_;
    ++pos_;
    for (;;) {
      if (pos_ >= s_.size()) b_.fail(line_place(start_line), "a string that never ends");
      const char c = s_[pos_++];
      if (c == '"') return t;
      if (c == '\n') ++line_;
      if (c == '\\' && pos_ < s_.size()) {
        const char e = s_[pos_++];
        if (e == '\n') ++line_;
        if (e != '"' && e != '\\') t.text += '\\';
        t.text += e;
        continue;
      }
      t.text += c;
    }
  }

  const std::string& s_;
  const AutomatonBuilder& b_;
  std::size_t pos_ = 0, line_ = 1;
};

class HoaParser {
 public:
  HoaParser(const std::string& text, const AutomatonBuilder& b)
      : lexer_(text, b), b_(b), text_(text) {
    advance();
  }

  HoaAutomaton parse() {
    header();
    body();
    return std::move(aut_);
  }

 private:
  using Kind = Token::Kind;

  void advance() {
    last_end_ = cur_.end;
    before_cur_ = lexer_.position();
    cur_ = lexer_.next();
  }
  [[noreturn]] void fail_here(const std::string& problem) const {
    b_.fail(line_place(cur_.line), problem);
  }
  bool at(Kind kind, const char* text = nullptr) const {
    return cur_.kind == kind && (text == nullptr || cur_.text == text);
  }
  void expect_punct(const char* p, const std::string& where) {
    if (!at(Kind::Punct, p))
      fail_here("expected '" + std::string(p) + "' " + where + ", found " + describe(cur_));
    advance();
  }
  std::uint32_t expect_int(const std::string& what) {
    if (!at(Kind::Int)) fail_here("expected " + what + " (a number), found " + describe(cur_));
    const std::uint32_t v = cur_.value;
    advance();
    return v;
  }
  void refuse_abort() const {
    if (at(Kind::Abort))
      fail_here("--ABORT--: the tool that wrote this automaton abandoned it; it describes nothing");
  }
  bool item_ends() const {
    return at(Kind::HeaderName) || at(Kind::Body) || at(Kind::Eof) || at(Kind::Abort);
  }
  void count_bytes(std::uint64_t bytes) {
    bytes_ = saturating_add(bytes_, bytes);
    check_memory("reading the HOA file's states, edges and labels", bytes_);
  }

  // ---- header -------------------------------------------------------------------------
  void header() {
    if (!at(Kind::HeaderName, "HOA"))
      fail_here("a HOA file begins with 'HOA: v1', found " + describe(cur_));
    advance();
    if (!at(Kind::Ident)) fail_here("expected the format version after 'HOA:' (v1)");
    if (cur_.text.rfind("v1", 0) != 0)
      fail_here("HOA format version '" + cur_.text + "': krc reads version 1 (v1, v1.1)");
    advance();
    std::map<std::string, std::size_t> seen;  // the items that may occur once
    std::vector<std::pair<std::string, Lexer::Position>> aliases;
    std::vector<Token> alias_starts;
    bool have_acceptance = false;
    while (at(Kind::HeaderName)) {
      const std::string item = cur_.text;
      const std::size_t line = cur_.line;
      advance();
      // The items whose second occurrence would be ambiguous; others (a tool's own) may repeat.
      if (item == "States" || item == "AP" || item == "Acceptance" || item == "acc-name" ||
          item == "name" || item == "tool" || item == "HOA") {
        auto [it, fresh] = seen.emplace(item, line);
        if (!fresh)
          b_.fail(line_place(line), "a second '" + item + ":' header item (the first is on line " +
                                        std::to_string(it->second) + ")");
      }
      if (item == "States") {
        aut_.declared_states = expect_int("the number of states");
      } else if (item == "Start") {
        aut_.starts.push_back(expect_int("an initial state"));
        aut_.start_lines.push_back(line);
        if (at(Kind::Punct, "&"))
          fail_here(
              "universal branching: 'Start:' with a conjunction of states (an alternating "
              "automaton, whose run goes on from all of them at once); krc reads automata "
              "whose runs are paths, and several Start: items make a nondeterministic one");
      } else if (item == "AP") {
        const std::uint32_t n = expect_int("the number of atomic propositions");
        if (n > kMaxHoaPropositions)
          b_.fail(line_place(line), std::to_string(n) + " atomic propositions: krc reads at most " +
                                        std::to_string(kMaxHoaPropositions) +
                                        " (its alphabet is every valuation of them, 2^" +
                                        std::to_string(n) + " letters)");
        for (std::uint32_t j = 0; j < n; ++j) {
          if (!at(Kind::String))
            fail_here("'AP: " + std::to_string(n) + "' announces " + std::to_string(n) +
                      " propositions, but found " + describe(cur_) + " after " + std::to_string(j));
          if (std::find(aut_.propositions.begin(), aut_.propositions.end(), cur_.text) !=
              aut_.propositions.end())
            fail_here("the atomic proposition \"" + cur_.text + "\" is listed twice");
          aut_.propositions.push_back(cur_.text);
          advance();
        }
        if (at(Kind::String))
          fail_here("'AP: " + std::to_string(n) + "' announces " + std::to_string(n) +
                    " propositions, but more follow");
      } else if (item == "Alias") {
        if (!at(Kind::AName)) fail_here("expected an alias name (@name) after 'Alias:'");
        alias_starts.push_back(cur_);
        advance();
        aliases.emplace_back(alias_starts.back().text, before_cur_);
        skip_item();
      } else if (item == "Acceptance") {
        aut_.acceptance_sets = expect_int("the number of acceptance sets");
        const std::size_t start = cur_.offset;
        acceptance();
        aut_.acceptance.text = text_.substr(start, last_end_ - start);
        have_acceptance = true;
        if (!item_ends())
          fail_here("unexpected " + describe(cur_) + " after the acceptance condition");
      } else if (item == "name") {
        if (at(Kind::String)) aut_.name = cur_.text;
        skip_item();
      } else {
        // acc-name:, tool:, properties: and the items krc need not know. An upper-case one
        // may change the meaning (the format's rule): it is named in a note.
        if (std::isupper(static_cast<unsigned char>(item[0]))) aut_.ignored_headers.push_back(item);
        skip_item();
      }
    }
    refuse_abort();
    if (!at(Kind::Body)) fail_here("expected a header item or --BODY--, found " + describe(cur_));
    if (!have_acceptance)
      fail_here("no 'Acceptance:' header item before --BODY-- (the format requires one)");
    const Lexer::Position body_position = before_cur_;
    // Aliases may name propositions declared after them, so they are read now, in order.
    for (std::size_t k = 0; k < aliases.size(); ++k) {
      lexer_.seek(aliases[k].second);
      advance();
      if (alias_guards_.count(aliases[k].first))
        b_.fail(line_place(alias_starts[k].line),
                "the alias " + aliases[k].first + " is defined twice");
      Guard g = label_expr(0);
      if (!item_ends()) fail_here("unexpected " + describe(cur_) + " in the alias's formula");
      count_bytes(g.bits.size() * 8 + 64 + aliases[k].first.size());
      alias_guards_.emplace(aliases[k].first, std::move(g));
    }
    lexer_.seek(body_position);
    advance();  // --BODY-- again
    advance();
  }

  void skip_item() {
    while (!item_ends()) advance();
  }

  // ---- acceptance condition -------------------------------------------------------------
  std::size_t add_node(HoaAcceptance::Node node) {
    aut_.acceptance.nodes.push_back(std::move(node));
    return aut_.acceptance.nodes.size() - 1;
  }
  void acceptance() { aut_.acceptance.root = acceptance_or(0); }
  std::size_t acceptance_or(std::size_t depth) {
    std::vector<std::size_t> operands{acceptance_and(depth)};
    while (at(Kind::Punct, "|")) advance(), operands.push_back(acceptance_and(depth));
    if (operands.size() == 1) return operands[0];
    HoaAcceptance::Node n;
    n.kind = HoaAcceptance::Kind::Or;
    n.operands = std::move(operands);
    return add_node(std::move(n));
  }
  std::size_t acceptance_and(std::size_t depth) {
    std::vector<std::size_t> operands{acceptance_atom(depth)};
    while (at(Kind::Punct, "&")) advance(), operands.push_back(acceptance_atom(depth));
    if (operands.size() == 1) return operands[0];
    HoaAcceptance::Node n;
    n.kind = HoaAcceptance::Kind::And;
    n.operands = std::move(operands);
    return add_node(std::move(n));
  }
  std::size_t acceptance_atom(std::size_t depth) {
    HoaAcceptance::Node n;
    if (at(Kind::Punct, "(")) {
      if (depth >= kMaxHoaNesting)
        fail_here("parentheses nested more than " + std::to_string(kMaxHoaNesting) +
                  " deep (krc's limit)");
      advance();
      const std::size_t inner = acceptance_or(depth + 1);
      expect_punct(")", "to close the parenthesis");
      return inner;
    }
    if (at(Kind::Ident, "t") || at(Kind::Ident, "f")) {
      n.kind = cur_.text == "t" ? HoaAcceptance::Kind::True : HoaAcceptance::Kind::False;
      advance();
      return add_node(std::move(n));
    }
    if (!at(Kind::Ident, "Inf") && !at(Kind::Ident, "Fin"))
      fail_here("expected Inf(...), Fin(...), t, f or '(' in the acceptance condition, found " +
                describe(cur_));
    n.kind = cur_.text == "Inf" ? HoaAcceptance::Kind::Inf : HoaAcceptance::Kind::Fin;
    advance();
    expect_punct("(", "after " + std::string(n.kind == HoaAcceptance::Kind::Inf ? "Inf" : "Fin"));
    if (at(Kind::Punct, "!")) n.complement = true, advance();
    const std::size_t line = cur_.line;
    n.set = expect_int("an acceptance set");
    if (n.set >= aut_.acceptance_sets)
      b_.fail(line_place(line), "acceptance set " + std::to_string(n.set) + ", but 'Acceptance: " +
                                    std::to_string(aut_.acceptance_sets) + "' declares sets 0 to " +
                                    std::to_string(aut_.acceptance_sets) + " - 1");
    expect_punct(")", "to close the acceptance atom");
    return add_node(std::move(n));
  }

  // ---- labels -------------------------------------------------------------------------
  std::size_t valuations() const { return std::size_t{1} << aut_.propositions.size(); }
  Guard constant(bool value) const {
    return Guard{constant_table(aut_.propositions.size(), value)};
  }
  void trim(Guard& g) const {
    if (valuations() < 64) g.bits[0] &= (std::uint64_t{1} << valuations()) - 1;
  }
  // Proposition j's table, made once: a label of a million atoms copies, it does not loop.
  Guard proposition(std::uint32_t j) {
    if (proposition_tables_.empty())
      proposition_tables_ = proposition_tables(aut_.propositions.size());
    return Guard{proposition_tables_[j]};
  }
  Guard label_expr(std::size_t depth) {
    Guard g = label_and(depth);
    while (at(Kind::Punct, "|")) {
      advance();
      const Guard h = label_and(depth);
      for (std::size_t i = 0; i < g.bits.size(); ++i) g.bits[i] |= h.bits[i];
    }
    return g;
  }
  Guard label_and(std::size_t depth) {
    Guard g = label_atom(depth);
    while (at(Kind::Punct, "&")) {
      advance();
      const Guard h = label_atom(depth);
      for (std::size_t i = 0; i < g.bits.size(); ++i) g.bits[i] &= h.bits[i];
    }
    return g;
  }
  Guard label_atom(std::size_t depth) {
    if (at(Kind::Punct, "!") || at(Kind::Punct, "(")) {
      if (depth >= kMaxHoaNesting)
        fail_here("'!' and parentheses nested more than " + std::to_string(kMaxHoaNesting) +
                  " deep in a label (krc's limit)");
      const bool negate = cur_.text == "!";
      advance();
      Guard g = negate ? label_atom(depth + 1) : label_expr(depth + 1);
      if (!negate) expect_punct(")", "to close the parenthesis");
      if (negate) {
        for (auto& word : g.bits) word = ~word;
        trim(g);
      }
      return g;
    }
    if (at(Kind::Ident, "t") || at(Kind::Ident, "f")) {
      Guard g = constant(cur_.text == "t");
      advance();
      return g;
    }
    if (at(Kind::Int)) {
      const std::uint32_t j = cur_.value;
      if (j >= aut_.propositions.size())
        fail_here("atomic proposition " + std::to_string(j) + ", but 'AP:' declares " +
                  std::to_string(aut_.propositions.size()));
      advance();
      return proposition(j);
    }
    if (at(Kind::AName)) {
      auto it = alias_guards_.find(cur_.text);
      if (it == alias_guards_.end())
        fail_here("the alias " + cur_.text + " is not defined (before its use)");
      advance();
      return it->second;
    }
    fail_here("expected t, f, a proposition number, an @alias, '!' or '(' in a label, found " +
              describe(cur_));
  }
  Guard bracket_label() {
    advance();  // '['
    Guard g = label_expr(0);
    expect_punct("]", "to close the label");
    return g;
  }

  std::vector<std::uint32_t> acceptance_signature() {
    std::vector<std::uint32_t> marks;
    if (!at(Kind::Punct, "{")) return marks;
    advance();
    while (at(Kind::Int)) {
      if (cur_.value >= aut_.acceptance_sets)
        fail_here("acceptance set " + std::to_string(cur_.value) +
                  ", but 'Acceptance: " + std::to_string(aut_.acceptance_sets) +
                  "' declares sets 0 to " + std::to_string(aut_.acceptance_sets) + " - 1");
      marks.push_back(cur_.value);
      advance();
    }
    expect_punct("}", "to close the acceptance sets");
    std::sort(marks.begin(), marks.end());
    marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
    return marks;
  }

  // ---- body ---------------------------------------------------------------------------
  void body() {
    const std::uint64_t guard_bytes = (valuations() + 63) / 64 * 8 + 32;
    for (;;) {
      refuse_abort();
      if (at(Kind::End)) break;
      if (!at(Kind::HeaderName, "State"))
        fail_here("expected 'State:' or --END--, found " + describe(cur_));
      HoaState state;
      state.line = cur_.line;
      advance();
      if (at(Kind::Punct, "[")) state.label = bracket_label();
      state.id = expect_int("the state's number");
      if (at(Kind::String)) state.name = cur_.text, advance();
      state.marks = acceptance_signature();
      count_bytes(sizeof(HoaState) + guard_bytes + 4 * state.marks.size() +
                  (state.name ? state.name->size() : 0));
      while (at(Kind::Punct, "[") || at(Kind::Int)) {
        HoaEdge edge;
        edge.line = cur_.line;
        if (at(Kind::Punct, "[")) edge.label = bracket_label();
        edge.target = expect_int("the edge's target state");
        if (at(Kind::Punct, "&"))
          fail_here(
              "universal branching: an edge to a conjunction of states (an alternating "
              "automaton, whose run goes on from all of them at once); krc reads automata "
              "whose runs are paths");
        edge.marks = acceptance_signature();
        count_bytes(sizeof(HoaEdge) + (edge.label ? guard_bytes : 0) + 4 * edge.marks.size());
        state.edges.push_back(std::move(edge));
      }
      aut_.states.push_back(std::move(state));
    }
    advance();  // --END--
    if (at(Kind::HeaderName, "HOA"))
      fail_here(
          "a second automaton begins here: krc reads one automaton per file (the first "
          "ends with the --END-- before it)");
    if (!at(Kind::Eof)) fail_here("unexpected " + describe(cur_) + " after --END--");
  }

  Lexer lexer_;
  const AutomatonBuilder& b_;
  const std::string& text_;
  Token cur_;
  std::size_t last_end_ = 0;
  Lexer::Position before_cur_{0, 1};
  std::map<std::string, Guard> alias_guards_;
  std::vector<TruthTable> proposition_tables_;
  std::uint64_t bytes_ = 0;
  HoaAutomaton aut_;
};

}  // namespace

HoaAutomaton parse_hoa(const std::string& text, const AutomatonBuilder& b) {
  return HoaParser(text, b).parse();
}

}  // namespace krc::frontend
