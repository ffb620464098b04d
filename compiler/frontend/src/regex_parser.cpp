// A recursive-descent parser for krc's regular expressions (regex_reader.hpp): one function per
// level of the grammar, each error naming the column of the character at fault.
//
//   alternation := concat ('|' concat)*
//   concat      := repeat*                 (none: the empty word)
//   repeat      := atom (quantifier '?'?)? (a second quantifier is refused, as Python does)
//   atom        := '(' alternation ')' | '(?:' alternation ')' | '[' class ']' | '.'
//                | '\' punctuation | '<' name '>' | any other character
//   quantifier  := '*' | '+' | '?' | '{' m '}' | '{' m ',' '}' | '{' m ',' n '}' | '{' ',' n '}'
#include <algorithm>
#include <cctype>
#include <map>

#include "krc/automata/automaton_builder.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/frontend/regex_reader.hpp"
#include "regex_syntax.hpp"
#include "utf8.hpp"

namespace krc::frontend {

namespace {

using Node = RegexNode;

// The pattern's characters (UTF-8 code points), one string each: column c is chars[c - 1].
std::vector<std::string> split_characters(const std::string& pattern, const std::string& source) {
  if (auto bad = first_invalid_utf8(pattern))
    throw InputError(source, "byte " + std::to_string(*bad + 1), "the pattern is not valid UTF-8");
  std::vector<std::string> chars;
  for (std::size_t i = 0; i < pattern.size();) {
    const auto b = static_cast<unsigned char>(pattern[i]);
    const std::size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    chars.push_back(pattern.substr(i, n));
    i += n;
  }
  return chars;
}

// The code point of one well-formed UTF-8 character.
char32_t code_point(const std::string& c) {
  const auto b = [&](std::size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(c[k]));
  };
  if (c.size() == 1) return b(0);
  if (c.size() == 2) return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  if (c.size() == 3) return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

std::string utf8(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | cp >> 6);
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | cp >> 12);
    s += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | cp >> 18);
    s += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
    s += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

bool is_single_character(const std::string& s) {
  if (s.empty() || first_invalid_utf8(s)) return false;
  const auto b = static_cast<unsigned char>(s[0]);
  return s.size() == std::size_t(b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4);
}

// "'a', 'b', 'c' and 4 more": an alphabet in a message.
std::string letter_list(const std::vector<std::string>& letters) {
  std::string list;
  const std::size_t shown = std::min<std::size_t>(letters.size(), 10);
  for (std::size_t i = 0; i < shown; ++i) list += (i ? ", '" : "'") + letters[i] + "'";
  if (shown < letters.size()) list += " and " + std::to_string(letters.size() - shown) + " more";
  return list.empty() ? "none" : list;
}

// A character of a class: what it names, whether it may end a range (a plain or escaped
// character, not a <name>), and its column.
struct ClassAtom {
  std::string letter;
  bool single = false;
  std::size_t column = 0;
};

class Parser {
 public:
  Parser(const std::string& pattern, const std::optional<std::vector<std::string>>& alphabet,
         const std::string& source)
      : chars_(split_characters(pattern, source)),
        source_(source),
        declared_(alphabet.has_value()) {
    if (declared_)
      for (const std::string& letter : *alphabet) add_letter(letter, 0);
  }

  ParsedRegex parse() {
    Node root = alternation();
    if (!at_end()) fail(column(), "unbalanced ')': no group to close");
    return {std::move(root), std::move(alphabet_)};
  }

 private:
  std::vector<std::string> chars_;
  std::size_t pos_ = 0, depth_ = 0;
  std::string source_;
  bool declared_;
  std::vector<std::string> alphabet_;
  std::map<std::string, LetterId> index_;
  bool multi_character_letters_ = false;

  bool at_end() const { return pos_ >= chars_.size(); }
  const std::string& peek(std::size_t ahead = 0) const {
    static const std::string none;
    return pos_ + ahead < chars_.size() ? chars_[pos_ + ahead] : none;
  }
  std::size_t column() const { return pos_ + 1; }
  [[noreturn]] void fail(std::size_t column, const std::string& problem) const {
    throw InputError(source_, "column " + std::to_string(column), problem);
  }

  LetterId add_letter(const std::string& letter, std::size_t column) {
    if (alphabet_.size() >= kMaxRegexLetters)
      fail(column, "the alphabet would have more than " +
                       with_thousands(static_cast<long long>(kMaxRegexLetters)) +
                       " letters (krc's limit for a regular expression)");
    if (letter == kReservedLetter)
      fail(column, "the letter name '" + letter +
                       "' is reserved: a compiled network's token 0 is <bos>, the start of "
                       "every word");
    const auto id = static_cast<LetterId>(alphabet_.size());
    alphabet_.push_back(letter);
    index_.emplace(letter, id);
    if (!is_single_character(letter)) multi_character_letters_ = true;
    return id;
  }

  // The letter `name`, written at `column`: a letter of the declared alphabet, or (without
  // one) a letter the pattern names, added on first use.
  LetterId letter(const std::string& name, std::size_t column) {
    if (auto it = index_.find(name); it != index_.end()) return it->second;
    if (!declared_) return add_letter(name, column);
    std::string problem =
        "'" + name + "' is not a letter of the alphabet (" + letter_list(alphabet_) + ")";
    if (multi_character_letters_ && is_single_character(name))
      problem += "; a letter of several characters is written <name>";
    fail(column, problem);
  }

  Node alternation() {
    std::vector<Node> branches{concat()};
    while (!at_end() && peek() == "|") {
      ++pos_;
      branches.push_back(concat());
    }
    if (branches.size() == 1) return std::move(branches.front());
    Node node;
    node.kind = Node::Kind::Alternation;
    node.children = std::move(branches);
    return node;
  }

  Node concat() {
    std::vector<Node> items;
    while (!at_end() && peek() != "|" && peek() != ")") items.push_back(repeat());
    if (items.size() == 1) return std::move(items.front());
    Node node;
    node.kind = items.empty() ? Node::Kind::Empty : Node::Kind::Concat;
    node.children = std::move(items);
    return node;
  }

  // A quantifier at the current position ('*', '+', '?', a well-formed '{...}'), consumed
  // into `node`; false (nothing consumed) when there is none.
  bool quantifier(std::size_t& min, std::size_t& max, bool& unbounded) {
    const std::string& c = peek();
    unbounded = false;
    if (c == "*" || c == "+" || c == "?") {
      ++pos_;
      min = c == "+" ? 1 : 0;
      max = 1;
      unbounded = c != "?";
      return true;
    }
    if (c != "{") return false;
    // {m}, {m,}, {m,n}, {,n}: digits, at most one comma, at least one number.
    std::size_t end = pos_ + 1, commas = 0, digits = 0;
    for (; end < chars_.size() && chars_[end] != "}"; ++end) {
      if (chars_[end] == ",")
        ++commas;
      else if (chars_[end].size() == 1 && chars_[end][0] >= '0' && chars_[end][0] <= '9')
        ++digits;
      else
        break;
    }
    if (end >= chars_.size() || chars_[end] != "}" || commas > 1 || digits == 0) return false;
    const std::size_t start = pos_;
    ++pos_;  // '{'
    auto number = [&](std::optional<std::size_t>& out) {
      const std::size_t at = column();
      std::size_t value = 0;
      bool any = false;
      while (peek() != "," && peek() != "}") {
        value = value * 10 + static_cast<std::size_t>(peek()[0] - '0');
        any = true;
        ++pos_;
        if (value > kMaxRegexRepeat)
          fail(at, "a repetition count above " + std::to_string(kMaxRegexRepeat) +
                       " (krc's limit: {m,n} copies its operand n times)");
      }
      if (any) out = value;
    };
    std::optional<std::size_t> low, high;
    number(low);
    const bool comma = peek() == ",";
    if (comma) {
      ++pos_;
      number(high);
    }
    ++pos_;  // '}'
    min = low.value_or(0);
    if (!comma) {
      max = min;
    } else if (high) {
      max = *high;
      if (max < min)
        fail(start + 1, "the repetition {" + std::to_string(min) + "," + std::to_string(max) +
                            "} has its bounds out of order");
    } else {
      unbounded = true;
    }
    return true;
  }

  bool quantifier_ahead() {
    const std::size_t saved = pos_;
    std::size_t min = 0, max = 0;
    bool unbounded = false;
    const bool found = quantifier(min, max, unbounded);
    pos_ = saved;
    return found;
  }

  Node repeat() {
    if (quantifier_ahead())
      fail(column(), "nothing to repeat: '" + peek() + "' follows no letter or group");
    Node operand = atom();
    Node node;
    const std::size_t at = column();
    if (!quantifier(node.min, node.max, node.unbounded)) return operand;
    // A lazy quantifier (a*?) matches the same words as a greedy one when the match is the
    // whole word.
    if (peek() == "?") ++pos_;
    if (quantifier_ahead())
      fail(column(), "a quantifier after a quantifier (the one at column " + std::to_string(at) +
                         "); put the first in parentheses, e.g. (a*)+");
    node.kind = Node::Kind::Repeat;
    node.children.push_back(std::move(operand));
    return node;
  }

  Node letters(std::vector<LetterId> set, bool negated) {
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    Node node;
    node.kind = Node::Kind::Letters;
    node.letters = std::move(set);
    node.negated = negated;
    return node;
  }

  Node atom() {
    const std::size_t at = column();
    const std::string c = peek();
    if (c == "(") return group();
    if (c == "[") return character_class();
    if (c == ".") {
      ++pos_;
      return letters({}, true);
    }
    if (c == "^" || c == "$")
      fail(at,
           "anchors ('^', '$') are not needed: the pattern always matches the whole word "
           "(a literal '" +
               c + "' is \\" + c + ")");
    if (c == "{")
      fail(at, "'{' starts a repetition {m}, {m,n}, {m,} or {,n} (a literal '{' is \\{)");
    if (c == "\\") return letters({letter(escape(), at)}, false);
    if (c == "<") return letters({letter(letter_name(), at)}, false);
    ++pos_;
    return letters({letter(c, at)}, false);
  }

  Node group() {
    const std::size_t at = column();
    ++pos_;  // '('
    if (peek() == "?") {
      if (peek(1) != ":")
        fail(at,
             "'(?' groups (lookaround, flags, named groups) are not supported: a group is "
             "(...) or (?:...)");
      pos_ += 2;
    }
    if (++depth_ > kMaxRegexDepth)
      fail(at, "groups nested more than " + std::to_string(kMaxRegexDepth) +
                   " deep (krc's limit for a regular expression)");
    Node inner = alternation();
    if (at_end()) fail(at, "'(' is not closed by ')'");
    ++pos_;  // ')'
    --depth_;
    return inner;
  }

  // '\' and the character after it, which must be punctuation: returns that character.
  std::string escape() {
    const std::size_t at = column();
    ++pos_;  // '\'
    if (at_end()) fail(at, "a '\\' at the end of the pattern escapes nothing");
    const std::string c = peek();
    if (c.size() == 1 && std::isalnum(static_cast<unsigned char>(c[0]))) {
      if (std::isdigit(static_cast<unsigned char>(c[0])))
        fail(at, "'\\" + c + "': backreferences are not supported (they are not regular)");
      fail(at, "'\\" + c +
                   "' is not supported: '\\' makes the punctuation character after it literal "
                   "(\\*, \\(, \\\\); there are no shorthand classes (\\d, \\w, \\s) or anchors "
                   "(\\b, \\A, \\Z): write a class such as [0-9]");
    }
    ++pos_;
    return c;
  }

  // '<' name '>': a letter of several characters; '\' escapes the character after it.
  std::string letter_name() {
    const std::size_t at = column();
    ++pos_;  // '<'
    std::string name;
    while (!at_end() && peek() != ">") {
      if (peek() == "\\") {
        ++pos_;
        if (at_end()) break;
      }
      name += peek();
      ++pos_;
    }
    if (at_end()) fail(at, "'<' opens a letter name that no '>' closes (a literal '<' is \\<)");
    ++pos_;  // '>'
    if (name.empty()) fail(at, "'<>' names no letter");
    return name;
  }

  ClassAtom class_atom() {
    ClassAtom atom{"", true, column()};
    if (peek() == "\\") {
      atom.letter = escape();
    } else if (peek() == "<") {
      atom.letter = letter_name();
      atom.single = false;
    } else {
      atom.letter = peek();
      ++pos_;
    }
    return atom;
  }

  Node character_class() {
    const std::size_t at = column();
    ++pos_;  // '['
    const bool negated = peek() == "^";
    if (negated) ++pos_;
    std::vector<LetterId> set;
    for (bool first = true;; first = false) {
      if (at_end()) fail(at, "'[' is not closed by ']'");
      if (peek() == "]" && !first) break;
      const ClassAtom low = class_atom();
      if (peek() != "-" || peek(1).empty() || peek(1) == "]") {
        set.push_back(letter(low.letter, low.column));
        continue;
      }
      const std::size_t dash = column();
      ++pos_;  // '-'
      const ClassAtom high = class_atom();
      if (!low.single || !high.single)
        fail(dash, "a range needs one character at each end, not a letter <name>");
      const char32_t lo = code_point(low.letter), hi = code_point(high.letter);
      if (lo > hi) fail(dash, "the range '" + low.letter + "-" + high.letter + "' is out of order");
      if (declared_) {  // the letters of the alphabet that fall in the range
        for (LetterId l = 0; l < alphabet_.size(); ++l)
          if (is_single_character(alphabet_[l]) && code_point(alphabet_[l]) >= lo &&
              code_point(alphabet_[l]) <= hi)
            set.push_back(l);
        continue;
      }
      if (hi - lo >= kMaxRegexLetters)
        fail(dash, "the range '" + low.letter + "-" + high.letter + "' names more than " +
                       with_thousands(static_cast<long long>(kMaxRegexLetters)) +
                       " letters (krc's limit for an alphabet)");
      for (char32_t cp = lo; cp <= hi; ++cp) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates are no characters
        set.push_back(letter(utf8(cp), dash));
      }
    }
    ++pos_;  // ']'
    return letters(std::move(set), negated);
  }
};

}  // namespace

ParsedRegex parse_regex(const std::string& pattern,
                        const std::optional<std::vector<std::string>>& alphabet,
                        const std::string& source) {
  if (pattern.size() > kMaxRegexLength)
    throw InputError(source, "",
                     "the pattern is " + with_thousands(static_cast<long long>(pattern.size())) +
                         " bytes, more than " +
                         with_thousands(static_cast<long long>(kMaxRegexLength)) +
                         " (krc's limit for a regular expression)");
  return Parser(pattern, alphabet, source).parse();
}

}  // namespace krc::frontend
