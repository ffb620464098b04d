#include "etf_syntax.hpp"

#include <cctype>
#include <optional>
#include <set>

#include "krc/automata/input_error.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc::frontend {

using krc::kMaxEtfLabels;
using krc::kMaxEtfSlots;

namespace {

// A token of LTSmin's lexer (ltsmin-lexer.l) as ETF uses them.
struct Token {
  enum Kind { kIdent, kNumber, kValue, kStar, kSlash, kColon } kind;
  std::string text;  // the identifier or the value, escapes decoded
  std::uint32_t number = 0;
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& file) : lines_(text), file_(file) {}
  EtfModel parse();

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& problem) const {
    throw InputError(file_, line_place(line), problem);
  }
  std::vector<Token> lex(const std::string& line) const;
  std::string quoted(const std::string& line, std::size_t& i) const;
  std::string chunk(const std::string& line, std::size_t& i) const;
  // The lines of the section opened at `begin` up to its "end KIND", as token lists.
  std::vector<std::pair<std::size_t, std::vector<Token>>> body(const std::string& kind,
                                                               std::size_t begin);
  std::vector<EtfDeclaration> declarations(const std::string& kind, std::size_t begin);
  void init_section(std::size_t begin);
  void trans_section(std::size_t begin);
  void sort_section(const std::vector<Token>& head, std::size_t begin);
  void map_section(const std::vector<Token>& head, std::size_t begin);
  std::uint32_t inline_value(const std::string& sort, const std::string& value, std::size_t line);
  void check_ranges() const;

  TextLines lines_;
  const std::string& file_;
  EtfModel m_;
};

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '\\';
}
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '\'' || c == '\\';
}

std::string Parser::quoted(const std::string& line, std::size_t& i) const {
  std::string value;
  for (++i; i < line.size() && line[i] != '"'; ++i) {
    if (static_cast<unsigned char>(line[i]) < 0x20 || line[i] == 0x7f)
      fail(lines_.number(), "a control character in a quoted value");
    if (line[i] == '\\') {
      if (i + 1 >= line.size() || (line[i + 1] != '\\' && line[i + 1] != '"'))
        fail(lines_.number(), "an unknown escape in a quoted value (ETF knows \\\\ and \\\")");
      ++i;
    }
    value += line[i];
  }
  if (i >= line.size()) fail(lines_.number(), "a quoted value never closed on its line");
  ++i;
  return value;
}

std::string Parser::chunk(const std::string& line, std::size_t& i) const {
  std::string value;
  for (++i; i < line.size() && line[i] != '#'; i += 2) {
    if (i + 1 >= line.size() || !std::isxdigit(static_cast<unsigned char>(line[i])) ||
        !std::isxdigit(static_cast<unsigned char>(line[i + 1])))
      fail(lines_.number(), "a #hex# value holds pairs of hexadecimal digits");
    value += static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16));
  }
  if (i >= line.size()) fail(lines_.number(), "a #hex# value never closed on its line");
  ++i;
  return value;
}

std::vector<Token> Parser::lex(const std::string& line) const {
  std::vector<Token> tokens;
  for (std::size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '%') {
      break;  // a comment to the line's end
    } else if (c == '*' || c == '/' || c == ':') {
      tokens.push_back({c == '*' ? Token::kStar : c == '/' ? Token::kSlash : Token::kColon, {}});
      ++i;
    } else if (c == '"') {
      tokens.push_back({Token::kValue, quoted(line, i)});
    } else if (c == '#') {
      tokens.push_back({Token::kValue, chunk(line, i)});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      const std::size_t start = i;
      while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
      const auto n = natural_number(line.substr(start, i - start));
      if (!n)
        fail(lines_.number(), "the number '" +
                                  line.substr(start, std::min<std::size_t>(i - start, 20)) +
                                  "' is too large (values are below 2^31)");
      tokens.push_back({Token::kNumber, line.substr(start, i - start), *n});
    } else if (ident_start(c)) {
      std::string name;
      for (; i < line.size() && ident_char(line[i]); ++i) {
        if (line[i] == '\\') {
          if (++i >= line.size()) fail(lines_.number(), "a '\\' at the end of a name");
        }
        name += line[i];
      }
      tokens.push_back({Token::kIdent, name});
    } else {
      fail(lines_.number(), "unexpected character '" + std::string(1, c) + "' (column " +
                                std::to_string(i + 1) + ")");
    }
  }
  return tokens;
}

bool is_word(const std::vector<Token>& t, std::size_t i, const char* word) {
  return i < t.size() && t[i].kind == Token::kIdent && t[i].text == word;
}

std::vector<std::pair<std::size_t, std::vector<Token>>> Parser::body(const std::string& kind,
                                                                     std::size_t begin) {
  std::vector<std::pair<std::size_t, std::vector<Token>>> result;
  for (std::string line; lines_.next(line);) {
    std::vector<Token> tokens = lex(line);
    if (is_word(tokens, 0, "end")) {
      if (tokens.size() != 2 || !is_word(tokens, 1, kind.c_str()))
        fail(lines_.number(), "expected 'end " + kind + "' to close the 'begin " + kind +
                                  "' of line " + std::to_string(begin));
      return result;
    }
    if (is_word(tokens, 0, "begin"))
      fail(lines_.number(), "a 'begin' inside the 'begin " + kind + "' section of line " +
                                std::to_string(begin) + " (sections do not nest)");
    if (!tokens.empty()) result.emplace_back(lines_.number(), std::move(tokens));
  }
  fail(lines_.number(), "the file ends inside the 'begin " + kind + "' section of line " +
                            std::to_string(begin) + " (no 'end " + kind + "')");
}

std::vector<EtfDeclaration> Parser::declarations(const std::string& kind, std::size_t begin) {
  std::vector<EtfDeclaration> result;
  for (const auto& [line, t] : body(kind, begin))
    for (std::size_t i = 0; i < t.size(); i += 3) {
      if (i + 2 >= t.size() || t[i].kind != Token::kIdent || t[i + 1].kind != Token::kColon ||
          t[i + 2].kind != Token::kIdent)
        fail(line, "expected declarations 'name:sort' in the " + kind + " section");
      auto bare = [](const std::string& s) { return s == "_" ? std::string() : s; };
      result.push_back({bare(t[i].text), bare(t[i + 2].text)});
      if (!result.back().sort.empty()) m_.sorts[result.back().sort];
      if (result.size() > (kind == "state" ? kMaxEtfSlots : kMaxEtfLabels))
        fail(line, "more than " + std::to_string(kind == "state" ? kMaxEtfSlots : kMaxEtfLabels) +
                       (kind == "state" ? " slots in the state vector" : " edge labels"));
    }
  return result;
}

std::uint32_t Parser::inline_value(const std::string& sort, const std::string& value,
                                   std::size_t line) {
  if (sort.empty()) fail(line, "a quoted value for a slot or label without a sort ('_')");
  EtfSort& s = m_.sorts[sort];
  const auto [it, added] = s.index.emplace(value, static_cast<std::uint32_t>(s.values.size()));
  if (added) s.values.push_back(value);
  return it->second;
}

void Parser::init_section(std::size_t begin) {
  if (m_.initial_line != 0)
    fail(lines_.number(),
         "a second init section (the first is at line " + std::to_string(m_.initial_line) + ")");
  m_.initial_line = begin;
  for (const auto& [line, t] : body("init", begin))
    for (const Token& v : t) {
      if (v.kind != Token::kNumber && v.kind != Token::kValue)
        fail(line, "the init section lists one value per slot (a number or a quoted value)");
      if (m_.initial.size() == m_.slots.size())
        fail(line, "the initial state has more values than the " + std::to_string(m_.slots.size()) +
                       " slots of the state vector");
      m_.initial.push_back(v.kind == Token::kNumber
                               ? v.number
                               : inline_value(m_.slots[m_.initial.size()].sort, v.text, line));
    }
  if (m_.initial.size() != m_.slots.size())
    fail(begin, "the initial state has " + std::to_string(m_.initial.size()) + " values for " +
                    std::to_string(m_.slots.size()) + " slots");
}

void Parser::trans_section(std::size_t begin) {
  EtfGroup g{{}, {}, begin};
  const std::size_t n = m_.slots.size(), k = m_.labels.size();
  std::set<std::vector<std::uint32_t>> seen;  // a section is a set of rows (LTSmin's TreeFold)
  for (const auto& [line, t] : body("trans", begin)) {
    EtfRow row{{}, {}, {}, line};
    std::vector<std::uint32_t> slots;
    std::size_t i = 0, slot = 0;
    for (; slot < n && i < t.size(); ++slot) {
      if (t[i].kind == Token::kStar) {
        ++i;
        continue;
      }
      if (i + 2 >= t.size() || t[i].kind != Token::kNumber || t[i + 1].kind != Token::kSlash ||
          t[i + 2].kind != Token::kNumber)
        fail(line,
             "slot " + std::to_string(slot + 1) + " of a transition: expected '*' or 'from/to'");
      slots.push_back(static_cast<std::uint32_t>(slot));
      row.from.push_back(t[i].number);
      row.to.push_back(t[i + 2].number);
      i += 3;
    }
    for (std::size_t l = 0; i < t.size(); ++i, ++l) {
      if (l >= k || (t[i].kind != Token::kNumber && t[i].kind != Token::kValue))
        fail(line, "a transition holds " + std::to_string(n) + " slots ('*' or 'from/to') and " +
                       std::to_string(k) + " edge label values");
      row.labels.push_back(t[i].kind == Token::kNumber
                               ? t[i].number
                               : inline_value(m_.labels[l].sort, t[i].text, line));
    }
    if (slot < n || row.labels.size() != k)
      fail(line, "a transition holds " + std::to_string(n) + " slots ('*' or 'from/to') and " +
                     std::to_string(k) + " edge label values");
    if (g.rows.empty()) g.slots = slots;
    if (slots != g.slots)
      fail(line,
           "the rows of a trans section change the same slots (LTSmin: 'inconsistent "
           "section'); this one differs from line " +
               std::to_string(g.rows.front().line));
    std::vector<std::uint32_t> whole = row.from;
    whole.insert(whole.end(), row.to.begin(), row.to.end());
    whole.insert(whole.end(), row.labels.begin(), row.labels.end());
    if (seen.insert(std::move(whole)).second) g.rows.push_back(std::move(row));
  }
  if (!g.rows.empty()) m_.groups.push_back(std::move(g));  // LTSmin skips empty sections
}

void Parser::sort_section(const std::vector<Token>& head, std::size_t begin) {
  if (head.size() != 3 || head[2].kind != Token::kIdent) fail(begin, "expected 'begin sort NAME'");
  const std::string name = head[2].text;
  if (!m_.sorts[name].values.empty())
    fail(begin, "the sort '" + name + "' already has values (LTSmin: 'sort not empty')");
  for (const auto& [line, t] : body("sort", begin))
    for (const Token& v : t) {
      if (v.kind != Token::kValue) fail(line, "a sort lists quoted or #hex# values");
      if (!m_.sorts[name].index.emplace(v.text, m_.sorts[name].values.size()).second)
        fail(line, "the sort '" + name + "' lists a value twice");
      m_.sorts[name].values.push_back(v.text);
    }
}

// A state label: read only for the values it gives its sort ("begin map shape:shape" with
// '0 * "square"' makes "square" the sort's value 0, as LTSmin's parser does).
void Parser::map_section(const std::vector<Token>& head, std::size_t begin) {
  if (head.size() != 5 || head[2].kind != Token::kIdent || head[3].kind != Token::kColon ||
      head[4].kind != Token::kIdent)
    fail(begin, "expected 'begin map name:sort'");
  for (const auto& [line, t] : body("map", begin)) {
    bool slots = t.size() == m_.slots.size() + 1;
    for (std::size_t i = 0; slots && i + 1 < t.size(); ++i)
      slots = t[i].kind == Token::kStar || t[i].kind == Token::kNumber;
    if (!slots || (t.back().kind != Token::kNumber && t.back().kind != Token::kValue))
      fail(line, "a map entry holds " + std::to_string(m_.slots.size()) +
                     " slots (a number or '*') and a value");
    if (t.back().kind == Token::kValue)
      inline_value(head[4].text == "_" ? "" : head[4].text, t.back().text, line);
  }
}

void Parser::check_ranges() const {
  auto check = [&](const std::string& sort, std::uint32_t v, std::size_t line,
                   const std::string& what) {
    const auto it = m_.sorts.find(sort);
    if (it != m_.sorts.end() && !it->second.values.empty() && v >= it->second.values.size())
      fail(line, "the value " + std::to_string(v) + " of " + what + " is out of range: its sort '" +
                     sort + "' has " + std::to_string(it->second.values.size()) + " values");
  };
  for (std::size_t i = 0; i < m_.slots.size(); ++i)
    check(m_.slots[i].sort, m_.initial[i], m_.initial_line, "slot " + std::to_string(i + 1));
  for (const EtfGroup& g : m_.groups)
    for (const EtfRow& r : g.rows) {
      for (std::size_t j = 0; j < g.slots.size(); ++j) {
        const std::string what = "slot " + std::to_string(g.slots[j] + 1);
        check(m_.slots[g.slots[j]].sort, r.from[j], r.line, what);
        check(m_.slots[g.slots[j]].sort, r.to[j], r.line, what);
      }
      for (std::size_t l = 0; l < r.labels.size(); ++l)
        check(m_.labels[l].sort, r.labels[l], r.line, "edge label '" + m_.labels[l].name + "'");
    }
}

EtfModel Parser::parse() {
  std::size_t sections = 0;
  for (std::string line; lines_.next(line);) {
    const std::vector<Token> head = lex(line);
    if (head.empty()) continue;
    const std::size_t at = lines_.number();
    if (!is_word(head, 0, "begin") || head.size() < 2 || head[1].kind != Token::kIdent)
      fail(at,
           "expected a section 'begin state', 'begin edge', 'begin init', 'begin trans', "
           "'begin sort' or 'begin map'");
    const std::string kind = head[1].text;
    const char* expected = sections == 0 ? "state" : sections == 1 ? "edge" : nullptr;
    if (expected && kind != expected)
      fail(at, std::string("section ") + std::to_string(sections + 1) +
                   " of an ETF file is 'begin " + expected + "'");
    ++sections;
    if (kind != "sort" && kind != "map" && head.size() != 2)
      fail(at, "expected 'begin " + kind + "' alone on its line");
    if (kind == "state") {
      m_.slots = declarations("state", at);
      if (m_.slots.empty()) fail(at, "the state vector has no slots (LTSmin needs at least 1)");
    } else if (kind == "edge") {
      m_.labels = declarations("edge", at);
    } else if (kind == "init") {
      init_section(at);
    } else if (kind == "trans") {
      trans_section(at);
    } else if (kind == "sort") {
      sort_section(head, at);
    } else if (kind == "map") {
      map_section(head, at);
    } else {
      fail(at, "unknown section 'begin " + kind + "'");
    }
  }
  if (sections < 2) fail(lines_.number(), "an ETF file begins with a state and an edge section");
  if (m_.initial_line == 0) fail(lines_.number(), "the file has no init section");
  check_ranges();
  return std::move(m_);
}

}  // namespace

std::string EtfModel::value_text(const std::string& sort, std::uint32_t v) const {
  const auto it = sorts.find(sort);
  if (it == sorts.end() || it->second.values.empty()) return std::to_string(v);
  const std::string& value = it->second.values[v];
  // As the value reads, unless that could be mistaken for another: then as ETF writes it.
  if (first_invalid_utf8(value)) {
    static const char* hex = "0123456789ABCDEF";
    std::string chunk = "#";
    for (unsigned char c : value) chunk += {hex[c >> 4], hex[c & 15]};
    return chunk + "#";
  }
  if (value.empty() || value.find_first_of("\"#,<>") != std::string::npos) {
    std::string text = "\"";
    for (char c : value) text += c == '"' || c == '\\' ? std::string{'\\', c} : std::string{c};
    return text + "\"";
  }
  return value;
}

EtfModel parse_etf(const std::string& text, const std::string& file) {
  return Parser(text, file).parse();
}

}  // namespace krc::frontend
