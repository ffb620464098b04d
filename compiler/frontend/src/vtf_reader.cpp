#include "krc/frontend/vtf_reader.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <vector>

#include "dot_guards.hpp"
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

// A transition of an @NFA-bits section: its source and target (the first and last tokens) and
// the guard between them, a Boolean formula over the bit variables.
struct BitsTransition {
  std::string from, guard, to, place;
};

// mata's constants \true and \false, as the guard parser spells them.
std::string guard_text(const std::vector<std::string>& tokens) {
  std::string guard;
  for (std::size_t i = 1; i + 1 < tokens.size(); ++i) {
    std::string t = tokens[i];
    for (const char* constant : {"true", "false"})
      for (std::size_t at; (at = t.find(std::string("\\") + constant)) != std::string::npos;)
        t.erase(at, 1);
    guard += (guard.empty() ? "" : " ") + t;
  }
  return guard;
}

// The letters of an @NFA-bits section: every valuation of its bit variables, as HOA's atomic
// propositions are read (valuations.hpp), and one transition per valuation a guard satisfies.
// A guard no valuation satisfies adds nothing, whatever its target (mata's `q \false \true`).
void add_bits_transitions(
    AutomatonBuilder& b, const std::vector<BitsTransition>& transitions,
    const std::function<StateId(const std::string&, const std::string&)>& state) {
  std::vector<std::string> guards;
  for (const auto& t : transitions) guards.push_back(t.guard);
  auto expansion = frontend::expand_formulas(guards);
  if (!expansion)
    for (const auto& t : transitions)
      if (!frontend::expand_formulas({t.guard}))
        b.fail(t.place, "'" + t.guard.substr(0, 80) +
                            "' is not a guard krc reads (variables, !, &, |, parentheses, "
                            "\\true, \\false)");
  if (!expansion->problem.empty())
    b.fail(transitions[expansion->problem_label].place, expansion->problem);
  std::uint64_t count = 0;
  for (const auto& table : expansion->letters)
    for (std::uint64_t word : table)
      count += static_cast<std::uint64_t>(__builtin_popcountll(word));
  check_memory("the " + std::to_string(count) + " transitions the guards stand for",
               saturating_mul(count, 160));
  for (const auto& letter : expansion->alphabet) b.letter(letter, transitions.front().place);
  for (std::size_t i = 0; i < transitions.size(); ++i) {
    const auto& table = expansion->letters[i];
    const bool satisfiable =
        std::any_of(table.begin(), table.end(), [](std::uint64_t w) { return w != 0; });
    if (!satisfiable) continue;
    if (transitions[i].to[0] == '\\')
      b.fail(transitions[i].place, "the target '" + transitions[i].to.substr(0, 40) +
                                       "' is a formula (an alternating automaton's); krc reads "
                                       "NFAs, whose target is one state");
    const StateId from = state(transitions[i].from, transitions[i].place);
    const StateId to = state(transitions[i].to, transitions[i].place);
    for (std::size_t letter = 0; letter < expansion->alphabet.size(); ++letter)
      if (table[letter / 64] >> (letter % 64) & 1)
        b.add_transition(from, static_cast<LetterId>(letter), to, transitions[i].place);
  }
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
  bool section = false, bits = false;
  std::vector<BitsTransition> bits_transitions;
  for (std::string current; lines.next(current);) {
    if (current.empty()) continue;
    const std::string place = line_place(lines.number());
    if (current[0] == '@') {
      const std::string type = words(current)[0];
      if (section)
        b.fail(place,
               "a second automaton ('" + type.substr(0, 40) + "'): krc reads one automaton a file");
      if (type != "@NFA-explicit" && type != "@NFA" && type != "@NFA-bits")
        b.fail(place, "a '" + type.substr(0, 40) +
                          "' section: krc reads mata's NFAs with explicit symbols "
                          "(@NFA-explicit) or bit-vector guards (@NFA-bits), not intervals, "
                          "alternating or other automata");
      section = true;
      bits = type == "@NFA-bits";
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
    if (bits) {
      if (fields.size() < 3)
        b.fail(place, "expected a transition 'source guard target', found '" +
                          current.substr(0, 80) + "'");
      state(fields[0], place);  // a state, even if its guard is never satisfied
      bits_transitions.push_back({fields[0], guard_text(fields), fields.back(), place});
      continue;
    }
    if (fields.size() != 3)
      b.fail(place,
             "expected a transition 'source symbol target', found '" + current.substr(0, 80) + "'");
    if (auto problem = frontend::invalid_utf8_problem(fields[1], "symbol")) b.fail(place, *problem);
    const StateId from = state(fields[0], place), to = state(fields[2], place);
    b.add_transition(from, b.letter(fields[1], place), to, place);
  }
  if (!section) b.fail("", "the file is empty");
  if (!bits_transitions.empty()) add_bits_transitions(b, bits_transitions, state);
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
