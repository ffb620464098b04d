#include "foreign_formats.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "krc/frontend/load_automaton.hpp"
#include "text.hpp"

namespace krc::frontend {

namespace {

// The first `count` non-empty lines, trimmed (at most the first 64 KiB are looked at).
std::vector<std::string> first_lines(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  std::istringstream in(text.substr(0, std::size_t{1} << 16));
  std::string line;
  while (lines.size() < count && std::getline(in, line))
    if (!trim(line).empty()) lines.push_back(trim(line));
  return lines;
}

// A RABIT state: "[x]" (a bracketed name without commas) or a bare name ("0", "q1").
bool rabit_state(const std::string& line) {
  if (line.size() >= 2 && line.front() == '[' && line.back() == ']')
    return line.find_first_of("],", 1) == line.size() - 1;
  return !line.empty() && std::all_of(line.begin(), line.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// A RABIT transition: "label,from->to" ("a,[1]->[2]", "1,0->1"), no spaces; the label is a
// plain name (so a JSON line such as ["a,b->c"] is not one).
bool rabit_edge(const std::string& line) {
  const auto comma = line.find(',');
  const auto arrow = line.find("->");
  if (comma == std::string::npos || comma == 0 || arrow == std::string::npos ||
      arrow <= comma + 1 || arrow + 2 >= line.size() ||
      line.find_first_of(" \t") != std::string::npos)
    return false;
  return line.find_first_of("[]{}\"", 0) >= comma &&
         rabit_state(line.substr(comma + 1, arrow - comma - 1)) &&
         rabit_state(line.substr(arrow + 2));
}

// "dfa {", "dfa [a..d] {" or "mealy {" (AutomataLib's TAF; its keywords ignore case).
bool taf_header(const std::string& line) {
  const std::string lower = lowercase(line.substr(0, 6));
  for (const std::string keyword : {"dfa", "mealy"})
    if (lower.rfind(keyword, 0) == 0) {
      const auto next = line.find_first_not_of(" \t", keyword.size());
      return next != std::string::npos && next > keyword.size() - 1 &&
             (line[next] == '{' || line[next] == '[' || line[next] == '"');
    }
  return false;
}

// "name(N) ..." (an LTSmin FSM state vector declaration).
bool fsm_declaration(const std::string& line) {
  std::size_t i = 0;
  while (i < line.size() &&
         (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == '.'))
    ++i;
  if (i == 0 || i >= line.size() || line[i] != '(') return false;
  const std::size_t digits = i + 1;
  for (++i; i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])); ++i) {
  }
  return i > digits && i < line.size() && line[i] == ')';
}

bool all_numbers(const std::string& line) {
  return !line.empty() && line.find_first_not_of("0123456789 \t") == std::string::npos;
}

// Stamina's ADL: comments ('#' to the line's end) aside, "N M" (two numbers), then a state
// "id true|false true|false" (an optional error flag after them).
bool adl_header(const std::string& text) {
  std::istringstream in(text.substr(0, std::size_t{1} << 16));
  std::vector<std::vector<std::string>> lines;
  for (std::string line; lines.size() < 2 && std::getline(in, line);) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::vector<std::string> fields;
    for (std::string w; fields.size() < 5 && words >> w;) fields.push_back(w);
    if (!fields.empty()) lines.push_back(fields);
  }
  auto is_flag = [](const std::string& w) { return w == "true" || w == "false"; };
  return lines.size() == 2 && lines[0].size() == 2 && all_numbers(lines[0][0]) &&
         all_numbers(lines[0][1]) && (lines[1].size() == 3 || lines[1].size() == 4) &&
         std::all_of(lines[1].begin() + 1, lines[1].end(), is_flag);
}

}  // namespace

std::optional<std::string> foreign_format(const std::string& text) {
  const std::vector<std::string> lines = first_lines(text, 8);
  // Numbers only: Abbadingo's training sets ("count alphabet", then "label length letters"),
  // words rather than an automaton. (Stamina's ADL, read, has 'true'/'false' flags.)
  if (lines.size() >= 2 && std::all_of(lines.begin(), lines.end(), all_numbers))
    return "a file of numbers only, as Abbadingo's training sets write words (a sample of "
           "words, not an automaton)";
  return std::nullopt;
}

std::string sniff_read_format(const std::string& text) {
  // Stamina's ADL first: its '#' comments would otherwise read as DOT's preprocessor lines.
  if (adl_header(text)) return "adl";
  const std::vector<std::string> lines = first_lines(text, 8);
  if (lines.empty()) return "";
  const std::string& first = lines[0];
  // RABIT (languageinclusion.org): "[init]", then "label,[from]->[to]", then accepting "[q]".
  if ((rabit_state(first) || rabit_edge(first)) &&
      std::any_of(lines.begin(), lines.end(), rabit_edge))
    return "ba";
  // GOAL's GFF: <Structure label-on="Transition" type="FiniteStateAutomaton"> or type="fa".
  const std::string head = lowercase(text.substr(0, 4096));
  if (head.find("<structure") != std::string::npos &&
      (head.find("label-on=") != std::string::npos ||
       head.find("type=\"finitestateautomaton\"") != std::string::npos ||
       head.find("type=\"fa\"") != std::string::npos))
    return "gff";
  // AutomataLib's TAF: "dfa {a, b} {", "dfa [a..d] {" or "mealy {a} {".
  if (taf_header(first)) return "taf";
  // mata's VTF: "@NFA-explicit", "%Initial q0", "%Final q1", "q0 a q1".
  if (first[0] == '@' && first.size() > 1 && std::isalpha(static_cast<unsigned char>(first[1])))
    return "vtf";
  // LTSmin's ETF: "begin state" (a comment may follow).
  if (first.rfind("begin state", 0) == 0 &&
      (first.size() == 11 || first[11] == ' ' || first[11] == '\t' || first[11] == '%'))
    return "etf";
  // mCRL2's and LTSmin's FSM: "name(N) Sort ..." declarations (or none), then "---" sections.
  if (first == "---" && lines.size() > 1) return "fsm";
  if (fsm_declaration(first))
    for (const auto& line : lines)
      if (line == "---") return "fsm";
  return "";
}

std::string foreign_format_problem(const std::string& format) {
  return "this is " + format + ", which krc does not read (yet); krc reads " + input_format_list() +
         ", gzip-compressed or not";
}

}  // namespace krc::frontend
