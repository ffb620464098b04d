#include "krc/frontend/taf_reader.hpp"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

enum class TokenKind { Symbol, Name, Quoted, Number, End };

struct Token {
  TokenKind kind;
  std::string text;  // the symbol ("{", "->", "..") or the name, quoted text, number
  std::size_t offset;
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Parser {
 public:
  Parser(const std::string& text, AutomatonBuilder& b, const CompletionOptions& options)
      : text_(text), b_(b), options_(options) {}

  bool read();  // true for a dfa, false for a mealy machine

 private:
  const std::string& text_;
  AutomatonBuilder& b_;
  const CompletionOptions& options_;
  std::size_t pos_ = 0;
  std::optional<Token> peeked_;
  bool mealy_ = false;
  bool null_output_noted_ = false;  // one note for the mealy transitions without an output
  std::vector<std::string> alphabet_;
  std::set<std::string> declared_;
  std::map<StateId, bool> accepting_;  // by its last declaration
  std::optional<StateId> initial_;
  std::map<std::pair<StateId, LetterId>, std::pair<StateId, std::string>> delta_;

  std::string place(std::size_t offset) const { return frontend::line_column_place(text_, offset); }
  [[noreturn]] void fail(std::size_t offset, const std::string& problem) const {
    b_.fail(place(offset), problem);
  }
  void note(std::size_t offset, const std::string& what) const {
    if (options_.note)
      options_.note(b_.file() + ": " + place(offset) + ": " + what + " (as AutomataLib reads it)");
  }

  Token scan();
  const Token& peek() {
    if (!peeked_) peeked_ = scan();
    return *peeked_;
  }
  Token next() {
    Token t = peek();
    peeked_.reset();
    return t;
  }
  bool at(const char* symbol) { return peek().kind == TokenKind::Symbol && peek().text == symbol; }
  Token expect(const char* symbol, const char* what) {
    Token t = next();
    if (t.kind != TokenKind::Symbol || t.text != symbol)
      fail(t.offset, std::string("expected '") + symbol + "' " + what + ", found " + shown(t));
    return t;
  }
  static std::string shown(const Token& t) {
    if (t.kind == TokenKind::End) return "the end of the file";
    return "'" + t.text.substr(0, 40) + "'";
  }
  std::string identifier(const char* what) {
    Token t = next();
    if (t.kind != TokenKind::Name)
      fail(t.offset, std::string("expected ") + what + ", found " + shown(t));
    return t.text;
  }
  std::string string_value(const char* what) {
    Token t = next();
    if (t.kind != TokenKind::Name && t.kind != TokenKind::Quoted && t.kind != TokenKind::Number)
      fail(t.offset, std::string("expected ") + what + ", found " + shown(t));
    if (auto problem = frontend::invalid_utf8_problem(t.text, what)) fail(t.offset, *problem);
    return t.text;
  }
  std::vector<std::string> collection();
  StateId state(const std::string& id, std::size_t offset);
  void state_declaration();
  void transition(StateId source, const std::string& source_name);
};

Token Parser::scan() {
  for (;;) {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (text_.compare(pos_, 2, "//") == 0) {
      const auto end = text_.find('\n', pos_);
      pos_ = end == std::string::npos ? text_.size() : end + 1;
      continue;
    }
    if (text_.compare(pos_, 2, "/*") == 0) {
      const auto end = text_.find("*/", pos_ + 2);
      if (end == std::string::npos) fail(pos_, "a comment '/*' that is never closed");
      pos_ = end + 2;
      continue;
    }
    break;
  }
  const std::size_t start = pos_;
  if (pos_ >= text_.size()) return {TokenKind::End, "", start};
  const char c = text_[pos_];
  for (const char* symbol : {"->", "..", "[", "]", "{", "}", ",", "/", "*"})
    if (text_.compare(pos_, std::char_traits<char>::length(symbol), symbol) == 0) {
      pos_ += std::char_traits<char>::length(symbol);
      return {TokenKind::Symbol, symbol, start};
    }
  if (is_name_start(c)) {
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    return {TokenKind::Name, text_.substr(start, pos_ - start), start};
  }
  if (std::isdigit(static_cast<unsigned char>(c))) {
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return {TokenKind::Number, text_.substr(start, pos_ - start), start};
  }
  if (c == '"') {
    // TAF.jj: one or more of \" or any character but '"'; \" stands for '"'.
    std::string value;
    ++pos_;
    for (;;) {
      if (pos_ >= text_.size()) fail(start, "a quoted name that is never closed");
      if (text_.compare(pos_, 2, "\\\"") == 0) {
        value += '"';
        pos_ += 2;
      } else if (text_[pos_] == '"') {
        ++pos_;
        break;
      } else {
        value += text_[pos_++];
      }
    }
    if (value.empty()) fail(start, "an empty quoted name \"\"");
    return {TokenKind::Quoted, value, start};
  }
  fail(start, std::string("unexpected character '") + c + "'");
}

// [a..d], {x, "y", 3} or a single name.
std::vector<std::string> Parser::collection() {
  if (at("[")) {
    next();
    const Token l = next();
    expect("..", "in a letter range [a..d]");
    const Token r = next();
    expect("]", "after a letter range [a..d]");
    auto lower = [](const Token& t) {
      return t.kind == TokenKind::Name && t.text.size() == 1 && t.text[0] >= 'a' &&
             t.text[0] <= 'z';
    };
    if (!lower(l) || !lower(r)) fail(l.offset, "a letter range is two lower-case letters, [a..d]");
    if (l.text[0] > r.text[0])
      fail(l.offset, "the letter range [" + l.text + ".." + r.text + "] is empty");
    std::vector<std::string> range;
    for (char x = l.text[0]; x <= r.text[0]; ++x) range.emplace_back(1, x);
    return range;
  }
  if (at("{")) {
    next();
    std::vector<std::string> set{string_value("a letter")};
    while (at(",")) {
      next();
      set.push_back(string_value("a letter"));
    }
    expect("}", "after a set of letters");
    return set;
  }
  return {string_value("a letter, {letters} or [a..z]")};
}

StateId Parser::state(const std::string& id, std::size_t offset) {
  if (auto q = b_.find_state(id)) return *q;
  check_memory("the states of the TAF file",
               saturating_mul(b_.state_count() + 1, 160 + 64 * alphabet_.size()));
  return b_.add_state(id, place(offset));
}

void Parser::state_declaration() {
  const Token at_name = peek();
  const std::string id = identifier("a state name or '}'");
  std::vector<std::pair<std::string, std::size_t>> opts;
  if (at("[")) {
    next();
    Token o = next();
    if (o.kind != TokenKind::Name)
      fail(o.offset, "expected a state option (initial, accepting), found " + shown(o));
    opts.emplace_back(o.text, o.offset);
    while (at(",")) {
      next();
      o = next();
      if (o.kind != TokenKind::Name) fail(o.offset, "expected a state option, found " + shown(o));
      opts.emplace_back(o.text, o.offset);
    }
    expect("]", "after the state's options");
  }
  if (!declared_.insert(id).second) note(at_name.offset, "state '" + id + "' declared twice");
  bool initial = false, accepting = false;
  for (const auto& [o, offset] : opts) {
    if (o == "initial" || o == "init")
      initial = true;
    else if (!mealy_ && (o == "accepting" || o == "acc"))
      accepting = true;
    else
      note(offset,
           "the option '" + o + "' of state '" + id + "' is not one AutomataLib knows: ignored");
  }
  const StateId q = state(id, at_name.offset);
  accepting_[q] = accepting;
  if (initial) {
    if (initial_ && *initial_ != q)
      note(at_name.offset, "a second initial state '" + id + "': not initial");
    else
      initial_ = q;
  }
  expect("{", "to open the state's transitions");
  while (!at("}")) {
    if (peek().kind == TokenKind::End)
      fail(peek().offset, "the state '" + id + "' is never closed ('}')");
    transition(q, id);
  }
  next();
}

void Parser::transition(StateId source, const std::string& source_name) {
  const std::size_t offset = peek().offset;
  const bool wildcard = at("*");
  std::vector<std::string> symbols;
  if (wildcard)
    next();
  else
    symbols = collection();
  std::string output;
  if (at("/")) {
    if (!mealy_) fail(peek().offset, "an output '/ x' in a dfa (only a mealy machine has outputs)");
    next();
    output = string_value("an output");
  } else if (mealy_ && !null_output_noted_) {
    // AutomataLib's grammar makes the output optional ([<SLASH> output=string()]) and builds
    // the transition with a null output: read as the empty output.
    note(peek().offset,
         "a mealy transition without an output ('input -> target'): AutomataLib "
         "gives it a null output, read as the empty output ''");
    null_output_noted_ = true;
  }
  expect("->", "before the transition's target");
  const Token target_token = peek();
  const std::string target_name = identifier("the target state");
  const StateId target = state(target_name, target_token.offset);
  const std::string here = place(offset);
  if (wildcard) symbols = alphabet_;
  std::vector<std::string> unknown;
  for (const std::string& s : symbols) {
    const auto l = b_.find_letter(s);
    if (!l) {
      unknown.push_back(s);
      continue;
    }
    const auto it = delta_.find({source, *l});
    if (it == delta_.end()) {
      delta_.emplace(std::make_pair(source, *l), std::make_pair(target, output));
      b_.add_transition(source, *l, target, here);
      if (mealy_) b_.add_output(source, *l, output);
    } else if (!wildcard && (it->second.first != target || it->second.second != output)) {
      note(offset, "a second transition from '" + source_name + "' on '" + s + "' (to '" +
                       target_name + "'): ignored, the first stays");
    }
  }
  if (!unknown.empty())
    note(offset, "'" + unknown.front() +
                     "' is not a letter of the alphabet: its transition from '" + source_name +
                     "' is ignored");
}

bool Parser::read() {
  const Token kind = next();
  const std::string keyword = frontend::lowercase(kind.text);
  if (kind.kind != TokenKind::Name || (keyword != "dfa" && keyword != "mealy"))
    fail(kind.offset, "a TAF file begins with 'dfa' or 'mealy', found " + shown(kind));
  mealy_ = keyword == "mealy";
  const std::size_t alphabet_offset = peek().offset;
  alphabet_ = collection();
  for (const std::string& a : alphabet_)
    if (!b_.find_letter(a)) b_.add_letter(a, place(alphabet_offset));
  expect("{", "to open the automaton's states");
  while (!at("}")) {
    if (peek().kind == TokenKind::End) fail(peek().offset, "the automaton is never closed ('}')");
    state_declaration();
  }
  next();
  if (peek().kind != TokenKind::End) fail(peek().offset, "text after the automaton's closing '}'");
  if (initial_) b_.set_initial(*initial_, place(0));
  for (const auto& [q, accepting] : accepting_)
    if (accepting) b_.add_accepting(q);
  return !mealy_;
}

}  // namespace

Automaton read_taf_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  Parser parser(text, b, options);
  const bool dfa = parser.read();
  // A dfa is an acceptor even when no state accepts: its missing transitions reject.
  if (dfa) b.set_missing_meaning("rejects from there on (a TAF dfa is an acceptor)");
  Automaton automaton = b.build(options);
  // A dfa's output is acceptance, even when no state accepts (the empty language).
  if (dfa && options.outputs) options.outputs->acceptor = true;
  return automaton;
}

}  // namespace krc
