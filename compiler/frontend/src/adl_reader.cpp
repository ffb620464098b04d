#include "krc/frontend/adl_reader.hpp"

#include <optional>
#include <vector>

#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

using frontend::line_place;
using frontend::trim;

// The line without its comment ('#' to the end), split at spaces and tabs into at most
// `most` + 1 words (one more than any line of the format has: enough to say "too many").
std::vector<std::string> words(const std::string& line, std::size_t most) {
  const std::string text = trim(line.substr(0, line.find('#')));
  std::vector<std::string> out;
  std::size_t i = 0;
  while (out.size() <= most) {
    i = text.find_first_not_of(" \t", i);
    if (i == std::string::npos) break;
    const std::size_t end = std::min(text.find_first_of(" \t", i), text.size());
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

std::optional<bool> flag(const std::string& word) {
  if (word == "true") return true;
  if (word == "false") return false;
  return std::nullopt;
}

std::string quoted(const std::string& line) { return "'" + trim(line).substr(0, 80) + "'"; }

}  // namespace

Automaton read_adl_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  frontend::TextLines lines(text);
  std::string current;
  std::vector<std::string> fields;
  // The next line that holds more than a comment; false at the end of the text.
  auto next = [&](std::size_t most) {
    while (lines.next(current)) {
      fields = words(current, most);
      if (!fields.empty()) return true;
    }
    return false;
  };
  if (!next(2)) b.fail("", "the file holds comments only (an ADL file begins with 'states edges')");
  const std::string header = line_place(lines.number());
  const auto states = fields.size() == 2 ? frontend::natural_number(fields[0]) : std::nullopt;
  const auto edges = fields.size() == 2 ? frontend::natural_number(fields[1]) : std::nullopt;
  if (!states || !edges)
    b.fail(header,
           "expected 'state_count edge_count' (two numbers below 2^31), found " + quoted(current));
  if (*states == 0) b.fail(header, "the header announces no states");
  // Each state and edge takes a line of its own: a header that announces more than the text
  // holds is refused before anything is made for them.
  const std::uint64_t announced = std::uint64_t{*states} + *edges;
  if (*states > kMaxAdlCount || *edges > kMaxAdlCount || announced > lines.count())
    b.fail(header, "the header announces " + std::to_string(*states) + " states and " +
                       std::to_string(*edges) + " edges, but the file has " +
                       std::to_string(lines.count()) + " lines (one per state and edge; at most " +
                       std::to_string(kMaxAdlCount) + " of each)");
  check_memory("the " + std::to_string(*states) + " states and " + std::to_string(*edges) +
                   " edges of the ADL file",
               saturating_add(saturating_mul(*states, 200), saturating_mul(*edges, 160)));
  // The file ends before the header's count of states or edges.
  auto file_ends = [&](const char* what, std::uint32_t announced_count, std::uint32_t read) {
    b.fail(line_place(lines.number()), "the header (" + header + ") announces " +
                                           std::to_string(announced_count) + " " + what +
                                           ", the file has " + std::to_string(read));
  };
  bool any_initial = false, any_error = false;
  std::vector<std::string> state_lines;  // where each state is declared
  for (std::uint32_t q = 0; q < *states; ++q) {
    if (!next(4)) file_ends("states", *states, q);
    const std::string place = line_place(lines.number());
    const auto initial = fields.size() >= 3 ? flag(fields[1]) : std::nullopt;
    const auto accepting = fields.size() >= 3 ? flag(fields[2]) : std::nullopt;
    const auto error = fields.size() == 4 ? flag(fields[3]) : std::optional<bool>(false);
    if (!initial || !accepting || !error || fields.size() > 4)
      b.fail(place,
             "expected a state 'id initial accepting' (initial and accepting 'true' or "
             "'false', then an optional error flag), found " +
                 quoted(current));
    if (auto problem = frontend::invalid_utf8_problem(fields[0], "state identifier"))
      b.fail(place, *problem);
    if (auto earlier = b.find_state(fields[0]))
      b.fail(place, "state '" + fields[0] + "' is declared twice (first at " +
                        state_lines[*earlier] + ")");
    const StateId id = b.add_state(fields[0], place);
    state_lines.push_back(place);
    if (*initial) b.add_initial(id, place);
    if (*accepting && !*error) b.add_accepting(id);
    any_initial = any_initial || *initial;
    any_error = any_error || (*error && *accepting);
  }
  for (std::uint32_t e = 0; e < *edges; ++e) {
    if (!next(3)) file_ends("edges", *edges, e);
    const std::string place = line_place(lines.number());
    if (fields.size() != 3)
      b.fail(place, "expected an edge 'source target symbol', found " + quoted(current));
    StateId ends[2];
    for (int i = 0; i < 2; ++i) {
      const auto q = b.find_state(fields[i]);
      if (!q)
        b.fail(place, "'" + fields[i].substr(0, 40) + "' is not a state (the " +
                          std::to_string(*states) + " states are declared after the header, " +
                          header + ")");
      ends[i] = *q;
    }
    if (auto problem = frontend::invalid_utf8_problem(fields[2], "symbol")) b.fail(place, *problem);
    b.add_transition(ends[0], b.letter(fields[2], place), ends[1], place);
  }
  if (next(0))
    b.fail(line_place(lines.number()), "data after the " + std::to_string(*edges) +
                                           " edges that the header (" + header +
                                           ") announces: " + quoted(current));
  if (!any_initial && options.initial.empty())
    b.fail(header, "no state is initial (Stamina would accept no word); --initial names one");
  if (any_error && options.note)
    options.note(file +
                 ": a state marked both accepting and error rejects (Stamina accepts a word "
                 "in a state that is accepting and not an error state)");
  return b.build(options);
}

}  // namespace krc
