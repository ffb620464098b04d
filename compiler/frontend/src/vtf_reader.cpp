#include "krc/frontend/vtf_reader.hpp"

#include <algorithm>
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
using frontend::trim;

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

Automaton read_vtf_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  frontend::TextLines lines(text);
  check_memory("the " + std::to_string(lines.count()) + " lines of the VTF file",
               saturating_mul(lines.count(), 480));
  auto state = [&](const std::string& q, const std::string& place) {
    if (auto problem = frontend::invalid_utf8_problem(q, "state name")) b.fail(place, *problem);
    if (auto id = b.find_state(q)) return *id;
    return b.add_state(q, place);
  };
  std::vector<std::pair<std::string, std::string>> initial, final_states;  // (text, place)
  bool section = false;
  for (std::string current; lines.next(current);) {
    if (current.empty()) continue;
    const std::string place = line_place(lines.number());
    if (current[0] == '@') {
      const std::string type = words(current)[0];
      if (section)
        b.fail(place,
               "a second automaton ('" + type.substr(0, 40) + "'): krc reads one automaton a file");
      if (type != "@NFA-explicit" && type != "@NFA")
        b.fail(place, "a '" + type.substr(0, 40) +
                          "' section: krc reads mata's explicit NFAs (@NFA-explicit), not "
                          "symbolic or other automata");
      section = true;
      continue;
    }
    if (!section) b.fail(place, "a VTF file begins with its type, '@NFA-explicit'");
    if (current[0] == '%') {
      const auto space = current.find_first_of(" \t");
      const std::string key = current.substr(0, space);
      const std::string value = space == std::string::npos ? "" : trim(current.substr(space));
      if (key == "%Initial") initial.emplace_back(value, place);
      if (key == "%Final") final_states.emplace_back(value, place);
      continue;
    }
    const auto fields = words(current);
    if (fields.size() != 3)
      b.fail(place,
             "expected a transition 'source symbol target', found '" + current.substr(0, 80) + "'");
    if (auto problem = frontend::invalid_utf8_problem(fields[1], "symbol")) b.fail(place, *problem);
    const StateId from = state(fields[0], place), to = state(fields[2], place);
    b.add_transition(from, b.letter(fields[1], place), to, place);
  }
  if (!section) b.fail("", "the file is empty");
  // "q0 q1" or "q0 | q1": those states; "!q0 & !q1": every state but those.
  auto states_of = [&](const std::string& value, const std::string& place) {
    std::vector<std::string> names;
    bool negated = false, positive = false;
    for (std::string w : words(value)) {
      if (w == "|" || w == "&") continue;
      if (w[0] == '!') {
        negated = true;
        w = w.substr(1);
      } else {
        positive = true;
      }
      if (w.empty() || w.find_first_of("()|&!") != std::string::npos)
        b.fail(place, "'" + value.substr(0, 80) +
                          "': krc reads a list of states or a conjunction of negated states "
                          "('!q0 & !q1')");
      names.push_back(w);
    }
    if (negated && positive)
      b.fail(place, "'" + value.substr(0, 80) + "' mixes states and negated states");
    std::vector<StateId> ids;
    if (negated) {
      std::set<StateId> excluded;
      for (const auto& n : names) excluded.insert(state(n, place));
      for (StateId q = 0; q < b.state_count(); ++q)
        if (!excluded.count(q)) ids.push_back(q);
    } else {
      for (const auto& n : names) ids.push_back(state(n, place));
    }
    return ids;
  };
  bool first = true;
  for (const auto& [value, place] : initial)
    for (StateId q : states_of(value, place)) {
      if (first)
        b.set_initial(q, place);
      else
        b.add_initial(q, place);
      first = false;
    }
  if (first) b.fail("", "no initial state ('%Initial q0')");
  for (const auto& [value, place] : final_states)
    for (StateId q : states_of(value, place)) b.add_accepting(q);
  return b.build(options);
}

}  // namespace krc
