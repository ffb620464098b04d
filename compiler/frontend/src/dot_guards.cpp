#include "dot_guards.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

#include "krc/automata/memory_budget.hpp"
#include "text.hpp"
#include "valuations.hpp"

namespace krc::frontend {

namespace {

// The parts of a label: split at ',' and at line breaks (a real one or DOT's "\n", "\l").
std::vector<std::string> label_parts(const std::string& label) {
  std::vector<std::string> parts{""};
  for (std::size_t i = 0; i < label.size(); ++i) {
    const char c = label[i];
    if (c == ',' || c == '\n') {
      parts.emplace_back();
    } else if (c == '\\' && i + 1 < label.size() &&
               (label[i + 1] == 'n' || label[i + 1] == 'l' || label[i + 1] == 'r')) {
      parts.emplace_back();
      ++i;
    } else {
      parts.back() += c;
    }
  }
  for (auto& p : parts) p = trim(p);
  parts.erase(std::remove(parts.begin(), parts.end(), std::string()), parts.end());
  return parts;
}

// A guard, read twice: first for its propositions and syntax, then as a truth table.
class GuardParser {
 public:
  GuardParser(const std::string& text, std::vector<std::string>& aps, bool add_aps)
      : s_(text), aps_(aps), add_aps_(add_aps) {}

  // The truth table over aps_ (only when !add_aps_); ok() says whether it parsed.
  std::vector<std::uint64_t> parse() {
    auto table = disjunction(0);
    skip_space();
    if (pos_ != s_.size()) ok_ = false;
    return table;
  }
  bool ok() const { return ok_; }
  bool has_operator() const { return operator_; }

 private:
  using Table = TruthTable;
  std::size_t valuations() const { return std::size_t{1} << aps_.size(); }
  Table constant(bool value) const {
    if (add_aps_) return {};
    return constant_table(aps_.size(), value);
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(const char* op) {
    skip_space();
    const std::size_t n = std::char_traits<char>::length(op);
    if (s_.compare(pos_, n, op) != 0) return false;
    pos_ += n;
    return true;
  }
  Table combine(Table a, const Table& b, bool conjunction) {
    operator_ = true;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
      a[i] = conjunction ? a[i] & b[i] : a[i] | b[i];
    return a;
  }
  Table disjunction(std::size_t depth) {
    Table t = conjunction(depth);
    while (ok_ && (eat("||") || eat("|"))) t = combine(t, conjunction(depth), false);
    return t;
  }
  Table conjunction(std::size_t depth) {
    Table t = atom(depth);
    while (ok_ && (eat("&&") || eat("&"))) t = combine(t, atom(depth), true);
    return t;
  }
  Table atom(std::size_t depth) {
    if (depth >= 100) {  // deeper than any tool writes: not read as a guard
      ok_ = false;
      return constant(false);
    }
    if (eat("!") || eat("~")) {
      operator_ = true;
      Table t = atom(depth + 1);
      if (add_aps_) return t;
      Table all = constant(true);
      for (std::size_t i = 0; i < t.size(); ++i) t[i] = ~t[i] & all[i];
      return t;
    }
    if (eat("(")) {
      Table t = disjunction(depth + 1);
      if (!eat(")")) ok_ = false;
      return t;
    }
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    const std::string word = s_.substr(start, pos_ - start);
    if (word.empty()) {
      ok_ = false;
      return constant(false);
    }
    // Spot's "1" and "0" are no operator (labels "0" and "1" are plain letters); LTLf2DFA's
    // "true" and "false" are.
    if (word == "1") return constant(true);
    if (word == "0") return constant(false);
    if (word == "true" || word == "false") return operator_ = true, constant(word == "true");
    if (!std::isalpha(static_cast<unsigned char>(word[0])) && word[0] != '_') {
      ok_ = false;
      return constant(false);
    }
    auto it = std::find(aps_.begin(), aps_.end(), word);
    if (it == aps_.end()) {
      if (!add_aps_) {
        ok_ = false;
        return constant(false);
      }
      aps_.push_back(word);
      return {};
    }
    if (add_aps_) return {};
    return (*tables_)[static_cast<std::size_t>(it - aps_.begin())];
  }

  const std::string& s_;
  std::vector<std::string>& aps_;
  bool add_aps_;
  std::size_t pos_ = 0;
  bool ok_ = true, operator_ = false;

 public:
  // Each proposition's table, made once for all labels: a guard of many atoms copies tables.
  const std::vector<Table>* tables_ = nullptr;
};

// Every label's table of letters, counted against the memory budget before it is made.
void check_letter_tables(std::size_t labels, std::size_t letters) {
  check_memory("the letter tables of " + std::to_string(labels) + " edge labels",
               saturating_mul(labels, (letters + 63) / 64 * 8 + 32));
}

}  // namespace

std::optional<LabelExpansion> expand_bit_vectors(const std::vector<std::string>& labels) {
  std::size_t width = 0;
  bool dont_care = false;
  std::vector<std::vector<std::string>> parts;
  for (const auto& label : labels) {
    parts.push_back(label_parts(label));
    if (parts.back().empty()) return std::nullopt;
    for (const auto& p : parts.back()) {
      if (p.find_first_not_of("01X") != std::string::npos) return std::nullopt;
      if (width != 0 && p.size() != width) return std::nullopt;
      width = p.size();
      dont_care = dont_care || p.find('X') != std::string::npos;
    }
  }
  if (!dont_care) return std::nullopt;
  LabelExpansion e;
  e.kind = "bit vectors";
  if (width > kMaxGuardPropositions) {
    e.problem = "bit vectors of " + std::to_string(width) + " tracks: krc reads at most " +
                std::to_string(kMaxGuardPropositions) + " (every vector is a letter: 2^" +
                std::to_string(width) + ")";
    return e;
  }
  const std::size_t count = std::size_t{1} << width;
  for (std::size_t v = 0; v < count; ++v) {
    std::string name;
    for (std::size_t k = 0; k < width; ++k) name += (v >> (width - 1 - k) & 1) ? '1' : '0';
    e.alphabet.push_back(std::move(name));
  }
  check_letter_tables(labels.size(), count);
  for (const auto& label_parts_list : parts) {
    TruthTable letters = constant_table(width, false);
    for (std::size_t v = 0; v < count; ++v)
      for (const auto& p : label_parts_list) {
        bool match = true;
        for (std::size_t k = 0; k < width && match; ++k)
          match = p[k] == 'X' || p[k] == e.alphabet[v][k];
        if (match) {
          letters[v / 64] |= std::uint64_t{1} << (v % 64);
          break;
        }
      }
    e.letters.push_back(std::move(letters));
  }
  return e;
}

namespace {

std::optional<LabelExpansion> expand(const std::vector<std::string>& labels, bool need_operator) {
  std::vector<std::string> aps;
  bool any_operator = false;
  for (const auto& label : labels) {
    GuardParser p(label, aps, true);
    p.parse();
    if (!p.ok()) return std::nullopt;
    any_operator = any_operator || p.has_operator();
    if (aps.size() > kMaxGuardPropositions + 1) break;  // enough to refuse
  }
  if (need_operator && !any_operator) return std::nullopt;
  LabelExpansion e;
  e.kind = "guards";
  if (aps.size() > kMaxGuardPropositions) {
    e.problem = "guards over more than " + std::to_string(kMaxGuardPropositions) +
                " atomic propositions: krc reads at most " + std::to_string(kMaxGuardPropositions) +
                " (every valuation is a letter)";
    return e;
  }
  const std::size_t count = std::size_t{1} << aps.size();
  const std::vector<TruthTable> tables = proposition_tables(aps.size());
  for (std::size_t v = 0; v < count; ++v)
    e.alphabet.push_back(valuation_letter(static_cast<std::uint32_t>(v), aps));
  check_letter_tables(labels.size(), count);
  for (const auto& label : labels) {
    GuardParser p(label, aps, false);
    p.tables_ = &tables;
    e.letters.push_back(p.parse());
  }
  return e;
}

}  // namespace

std::optional<LabelExpansion> expand_guards(const std::vector<std::string>& labels) {
  return expand(labels, true);
}

std::optional<LabelExpansion> expand_formulas(const std::vector<std::string>& labels) {
  return expand(labels, false);
}

}  // namespace krc::frontend
