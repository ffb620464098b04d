#include "krc/frontend/ba_reader.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

using frontend::line_place;
using frontend::trim;

// "[q]" -> "q", "q" -> "q"; nullopt when it is not a state: brackets must hold no ',', '[',
// ']' or space, a bare name only letters, digits, '_' and '.'.
std::optional<std::string> state_name(const std::string& token) {
  std::string inner = token;
  if (token.size() >= 2 && token.front() == '[' && token.back() == ']') {
    inner = token.substr(1, token.size() - 2);
    if (inner.find_first_of(",[] \t") != std::string::npos) return std::nullopt;
  } else if (!std::all_of(token.begin(), token.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
             })) {
    return std::nullopt;
  }
  if (inner.empty()) return std::nullopt;
  return inner;
}

struct Edge {
  std::string label, from, to;
};

// "label,from->to": the label ends at the first comma, the target begins after the last "->".
std::optional<Edge> edge(const std::string& line) {
  const auto comma = line.find(',');
  const auto arrow = line.rfind("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma)
    return std::nullopt;
  auto from = state_name(trim(line.substr(comma + 1, arrow - comma - 1)));
  auto to = state_name(trim(line.substr(arrow + 2)));
  if (!from || !to) return std::nullopt;
  return Edge{trim(line.substr(0, comma)), *from, *to};
}

}  // namespace

Automaton read_ba_automaton(const std::string& text, const std::string& file,
                            const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  // Each line makes at most two states and a transition: counted against the memory budget
  // before any is made.
  frontend::TextLines lines(text);
  check_memory("the " + std::to_string(lines.count()) + " lines of the RABIT file",
               saturating_mul(lines.count(), 480));
  auto state = [&](const std::string& q, const std::string& place) {
    if (auto problem = frontend::invalid_utf8_problem(q, "state name")) b.fail(place, *problem);
    if (auto id = b.find_state(q)) return *id;
    return b.add_state(q, place);
  };
  std::optional<StateId> initial;
  std::string initial_line;
  std::vector<StateId> accepting;
  bool seen_edge = false;
  for (std::string current; lines.next(current);) {
    if (current.empty()) continue;
    const std::string place = line_place(lines.number());
    if (auto e = edge(current)) {
      if (e->label.empty()) b.fail(place, "a transition without a label ('label,[from]->[to]')");
      if (auto problem = frontend::invalid_utf8_problem(e->label, "label")) b.fail(place, *problem);
      const StateId from = state(e->from, place), to = state(e->to, place);
      if (!initial) {
        initial = from;
        if (options.note)
          options.note(file + ": no initial state line: the first transition's source '" + e->from +
                       "' is initial (RABIT's convention)");
      }
      b.add_transition(from, b.letter(e->label, place), to, place);
      seen_edge = true;
      continue;
    }
    const auto q = state_name(current);
    if (!q)
      b.fail(place, "expected a transition 'label,[from]->[to]' or a state '[q]', found '" +
                        current.substr(0, 80) + "'");
    if (!seen_edge && initial)
      b.fail(place,
             "a second state line before the transitions: a RABIT file has one initial "
             "state (on " +
                 initial_line + ")");
    if (!seen_edge) {
      initial = state(*q, place);
      initial_line = place;
    } else {
      accepting.push_back(state(*q, place));
    }
  }
  if (!initial) b.fail("", "the file is empty");
  b.set_initial(*initial, line_place(1));
  if (accepting.empty()) {
    for (StateId q = 0; q < b.state_count(); ++q) b.add_accepting(q);
    if (options.note)
      options.note(file + ": no accepting state listed: every state accepts (RABIT's convention)");
  } else {
    for (StateId q : accepting) b.add_accepting(q);
    if (options.note)
      options.note(file +
                   ": RABIT's Büchi automaton read for finite words: a word is accepted when a "
                   "run ends in an accepting state (as krc reads HOA's Büchi acceptance)");
  }
  return b.build(options);
}

}  // namespace krc
