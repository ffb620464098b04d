#include "krc/frontend/aut_reader.hpp"

#include <array>
#include <cctype>
#include <cstdint>
#include <optional>

#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

using frontend::line_place;
using frontend::natural_number;
using frontend::trim;

// "(a, b, c)" -> {a, b, c}: the first field ends at the first comma, the last begins after the
// last one, and the middle (a label may hold commas and parentheses) is what lies between.
std::optional<std::array<std::string, 3>> triple(const std::string& line) {
  const std::string t = trim(line);
  if (t.size() < 2 || t.front() != '(' || t.back() != ')') return std::nullopt;
  const std::string inner = t.substr(1, t.size() - 2);
  const auto first = inner.find(','), last = inner.rfind(',');
  if (first == std::string::npos || first == last) return std::nullopt;
  return std::array<std::string, 3>{trim(inner.substr(0, first)),
                                    trim(inner.substr(first + 1, last - first - 1)),
                                    trim(inner.substr(last + 1))};
}

bool is_internal(const std::string& label) { return label == "i" || label == "tau"; }

// mCRL2's probabilistic extension writes a state as a distribution "0 1/2 1".
bool is_distribution(const std::string& field) {
  return field.find('/') != std::string::npos && field.find(' ') != std::string::npos;
}
constexpr const char* kProbabilisticAut =
    "a probabilistic transition system (mCRL2's extension of the format: a distribution "
    "such as '0 1/2 1' where a state belongs); krc reads deterministic and nondeterministic ones";

}  // namespace

Automaton read_aut_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  frontend::TextLines lines(text);
  std::string current;
  do {
    if (!lines.next(current)) b.fail("", "the file is empty");
  } while (current.empty());
  const std::string header = current;
  if (header.rfind("des", 0) != 0)
    b.fail(line_place(lines.number()),
           "an Aldebaran file begins with 'des (initial, transitions, states)'");
  const auto counts = triple(trim(header.substr(3)));
  const auto initial = counts ? natural_number((*counts)[0]) : std::nullopt;
  const auto transitions = counts ? natural_number((*counts)[1]) : std::nullopt;
  const auto states = counts ? natural_number((*counts)[2]) : std::nullopt;
  if (counts && is_distribution((*counts)[0]))
    b.fail(line_place(lines.number()), kProbabilisticAut);
  if (!initial || !transitions || !states)
    b.fail(line_place(lines.number()),
           "expected 'des (initial, transitions, states)' with three numbers "
           "below 2^31, found '" +
               header.substr(0, 80) + "'");
  if (*states == 0) b.fail(line_place(lines.number()), "the system has no states ('des' says 0)");
  if (*initial >= *states)
    b.fail(line_place(lines.number()), "the initial state " + std::to_string(*initial) +
                                           " is not one of the states 0 to " +
                                           std::to_string(*states - 1));
  // Each state and transition is counted against the memory budget before any is made.
  check_memory("the " + std::to_string(*states) + " states and " + std::to_string(*transitions) +
                   " transitions of the Aldebaran file",
               saturating_add(saturating_mul(*states, 160), saturating_mul(*transitions, 160)));
  const std::string header_place = line_place(lines.number());
  for (std::uint32_t q = 0; q < *states; ++q) {
    b.add_state(std::to_string(q), header_place);
    b.add_accepting(q);  // the language is the system's traces
  }
  b.set_initial(*initial, header_place);
  std::uint64_t read = 0;
  bool internal = false;
  while (lines.next(current)) {
    if (current.empty()) continue;
    const std::string place = line_place(lines.number());
    const auto fields = triple(current);
    if (!fields)
      b.fail(place, "expected a transition '(from, \"label\", to)', found '" +
                        current.substr(0, 80) + "'");
    if (is_distribution((*fields)[2])) b.fail(place, kProbabilisticAut);
    const auto from = natural_number((*fields)[0]), to = natural_number((*fields)[2]);
    for (const auto& [n, s] : {std::pair{from, (*fields)[0]}, std::pair{to, (*fields)[2]}})
      if (!n || *n >= *states)
        b.fail(place, "'" + s.substr(0, 40) + "' is not a state (the states are 0 to " +
                          std::to_string(*states - 1) + ")");
    if (++read > *transitions)
      b.fail(place,
             "more transitions than the " + std::to_string(*transitions) + " that 'des' announces");
    std::string label = (*fields)[1];
    if (label.size() >= 2 && label.front() == '"' && label.back() == '"')
      label = label.substr(1, label.size() - 2);
    if (is_internal(label)) {
      b.add_epsilon(*from, *to, place);
      internal = true;
      continue;
    }
    if (label.empty()) b.fail(place, "an empty label");
    if (auto problem = frontend::invalid_utf8_problem(label, "label")) b.fail(place, *problem);
    b.add_transition(*from, b.letter(label, place), *to, place);
  }
  if (read != *transitions)
    b.fail(line_place(lines.number()), "'des' announces " + std::to_string(*transitions) +
                                           " transitions, the file has " + std::to_string(read));
  if (internal && options.note) options.note(frontend::internal_action_note(file, "('i', 'tau')"));
  return b.build(options);
}

}  // namespace krc
