#include "krc/frontend/fsm_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

using frontend::line_place;
using frontend::natural_number;
using frontend::trim;

struct Line {
  std::string text;
  std::size_t number;
};

// The quoted values of a parameter declaration's rest ('Bool "F" "T"' -> F, T).
std::vector<std::string> quoted_values(const std::string& rest) {
  std::vector<std::string> values;
  for (auto open = rest.find('"'); open != std::string::npos;) {
    const auto close = rest.find('"', open + 1);
    if (close == std::string::npos) break;
    values.push_back(rest.substr(open + 1, close - open - 1));
    open = rest.find('"', close + 1);
  }
  return values;
}

// A value as it reads, unless it holds what separates or frames a state's name (",<>\"") or
// is empty: then quoted, so that distinct vectors keep distinct names.
std::string shown_value(const std::string& value) {
  if (!value.empty() && value.find_first_of(",<>\"") == std::string::npos &&
      !frontend::first_invalid_utf8(value))
    return value;
  std::string text = "\"";
  for (char c : value) text += c == '"' || c == '\\' ? std::string{'\\', c} : std::string{c};
  return frontend::replace_invalid_utf8(text + "\"");
}

constexpr const char* kProbabilisticFsm =
    "a probability distribution ('[2 1/2 3 1/2]'): krc reads transition systems without "
    "probabilities";

}  // namespace

Automaton read_fsm_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  // The sections, split at the lines "---".
  std::vector<std::vector<Line>> sections(1);
  frontend::TextLines lines(text);
  for (std::string current; lines.next(current);) {
    if (current == "---") {
      sections.emplace_back();
      if (sections.size() > 4)
        b.fail(line_place(lines.number()),
               "a fifth section: an FSM file has at most four ('---' three times)");
      continue;
    }
    if (!current.empty()) sections.back().push_back({current, lines.number()});
  }
  if (sections.size() < 3)
    b.fail(line_place(lines.number()),
           "an FSM file has parameters, states and transitions separated by "
           "lines '---'; this one has " +
               std::to_string(sections.size() - 1) + " such lines");
  // Parameters: "name(N) Sort "v1" ... "vN"": their cardinalities bound the state lines.
  std::vector<std::uint32_t> cardinalities;
  std::vector<std::vector<std::string>> domains;  // each parameter's quoted values
  for (const Line& p : sections[0]) {
    const auto open = p.text.find('('), close = p.text.find(')');
    const auto n = open != std::string::npos && close != std::string::npos && close > open
                       ? natural_number(p.text.substr(open + 1, close - open - 1))
                       : std::nullopt;
    if (open == 0 || !n)
      b.fail(line_place(p.number), "expected a parameter 'name(N) Sort \"v1\" ...', found '" +
                                       p.text.substr(0, 80) + "'");
    const auto values = static_cast<std::size_t>(
        std::count(p.text.begin() + static_cast<std::ptrdiff_t>(close), p.text.end(), '"'));
    if (values % 2 != 0 || (*n > 0 && values / 2 != *n))
      b.fail(line_place(p.number), "the parameter declares " + std::to_string(*n) +
                                       " values and lists " + std::to_string(values / 2));
    cardinalities.push_back(*n);
    domains.push_back(quoted_values(p.text.substr(close + 1)));
  }
  std::vector<std::string> vector_names;  // "<F,1>": each state line's parameter values
  for (const Line& s : sections[1]) {
    std::istringstream in(s.text);
    std::size_t k = 0;
    std::string vector_name = "<";
    for (std::string field; in >> field; ++k) {
      const auto v = natural_number(field);
      if (v && k < domains.size())
        vector_name += (k ? "," : "") +
                       (*v < domains[k].size() ? shown_value(domains[k][*v]) : std::to_string(*v));
      if (!v || k >= cardinalities.size() || (cardinalities[k] > 0 && *v >= cardinalities[k]))
        b.fail(line_place(s.number), "a state line lists the value index of each of the " +
                                         std::to_string(cardinalities.size()) +
                                         " parameters, each below its domain's size; found '" +
                                         s.text.substr(0, 80) + "'");
    }
    if (k != cardinalities.size())
      b.fail(line_place(s.number), "a state line with " + std::to_string(k) + " values for " +
                                       std::to_string(cardinalities.size()) + " parameters");
    vector_names.push_back(vector_name + ">");
  }
  // Transitions: "from to "label"".
  struct Edge {
    std::uint32_t from, to;
    std::string label;
    std::size_t line;
  };
  std::vector<Edge> edges;
  check_memory("the " + std::to_string(sections[2].size()) + " transitions of the FSM file",
               saturating_mul(sections[2].size(), 240));
  const auto declared = static_cast<std::uint32_t>(sections[1].size());
  std::uint32_t states = declared;
  for (const Line& t : sections[2]) {
    const auto quote = t.text.find('"');
    if (quote == std::string::npos || t.text.back() != '"' || quote + 1 >= t.text.size() ||
        t.text.find('"', quote + 1) != t.text.size() - 1)
      b.fail(line_place(t.number),
             "expected a transition 'from to \"label\"', found '" + t.text.substr(0, 80) + "'");
    if (t.text.find('[') < quote) b.fail(line_place(t.number), kProbabilisticFsm);
    std::istringstream in(t.text.substr(0, quote));
    std::string from_text, to_text, extra;
    in >> from_text >> to_text >> extra;
    const auto from = natural_number(from_text), to = natural_number(to_text);
    if (!from || !to || !extra.empty())
      b.fail(line_place(t.number),
             "expected a transition 'from to \"label\"' with two state "
             "numbers, found '" +
                 t.text.substr(0, 80) + "'");
    for (std::uint32_t q : {*from, *to}) {
      if (q == 0 || (declared > 0 && q > declared))
        b.fail(line_place(t.number),
               "'" + std::to_string(q) + "' is not a state (states are numbered from 1" +
                   (declared > 0 ? " to " + std::to_string(declared) : std::string()) + ")");
      states = std::max(states, q);
    }
    edges.push_back({*from, *to, t.text.substr(quote + 1, t.text.size() - quote - 2), t.number});
  }
  std::uint32_t initial = 1;
  if (sections.size() == 4) {
    if (sections[3].size() != 1)
      b.fail(line_place(sections[3].empty() ? lines.number() : sections[3][1].number),
             "the initial state section holds one state number");
    const Line& i = sections[3][0];
    if (i.text.front() == '[') b.fail(line_place(i.number), kProbabilisticFsm);
    const auto q = natural_number(i.text);
    if (!q || *q == 0 || *q > std::max<std::uint32_t>(states, 1))
      b.fail(line_place(i.number), "the initial state '" + i.text.substr(0, 40) +
                                       "' is not one of the states 1 to " +
                                       std::to_string(std::max<std::uint32_t>(states, 1)));
    initial = *q;
  }
  states = std::max<std::uint32_t>(states, 1);
  check_memory("the " + std::to_string(states) + " states of the FSM file",
               saturating_mul(states, 160));
  // States are named by their parameter values where every state has a line, the vectors are
  // distinct and there are parameters; else by their numbers.
  const bool by_values =
      !cardinalities.empty() && declared == states &&
      std::set<std::string>(vector_names.begin(), vector_names.end()).size() == vector_names.size();
  for (std::uint32_t q = 1; q <= states; ++q) {
    b.add_state(by_values ? vector_names[q - 1] : std::to_string(q),
                line_place(q <= declared ? sections[1][q - 1].number : 1));
    b.add_accepting(q - 1);  // the language is the system's traces
  }
  b.set_initial(initial - 1, line_place(1));
  bool internal = false;
  for (const Edge& e : edges) {
    const std::string place = line_place(e.line);
    if (e.label == "tau") {
      b.add_epsilon(e.from - 1, e.to - 1, place);
      internal = true;
      continue;
    }
    if (e.label.empty()) b.fail(place, "an empty label");
    if (auto problem = frontend::invalid_utf8_problem(e.label, "label")) b.fail(place, *problem);
    b.add_transition(e.from - 1, b.letter(e.label, place), e.to - 1, place);
  }
  if (internal && options.note) options.note(frontend::internal_action_note(file, "'tau'"));
  return b.build(options);
}

}  // namespace krc
