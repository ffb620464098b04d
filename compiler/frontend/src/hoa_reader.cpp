#include "krc/frontend/hoa_reader.hpp"

#include <algorithm>
#include <bit>
#include <set>

#include "hoa_syntax.hpp"
#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "utf8.hpp"
#include "valuations.hpp"

namespace krc {

namespace {

using frontend::Guard;
using frontend::HoaAutomaton;
using frontend::HoaState;
using frontend::line_place;

std::vector<std::uint32_t> merged(const std::vector<std::uint32_t>& a,
                                  const std::vector<std::uint32_t>& b) {
  std::vector<std::uint32_t> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class HoaAutomatonReader {
 public:
  HoaAutomatonReader(AutomatonBuilder& b, HoaAutomaton h, const CompletionOptions& options)
      : b_(b), h_(std::move(h)), options_(options) {}

  void read() {
    index_states();
    label_edges();
    decide_acceptance();
    add_states();
    add_letters();
    add_transitions();
    add_initial_states();
  }

 private:
  // Every state by number: those the body lists, and those only named (by States:, an edge
  // or Start:), which have no edges.
  void index_states() {
    std::uint64_t n = h_.declared_states.value_or(0);
    auto check = [&](std::uint32_t id, std::size_t line, const char* what) {
      if (h_.declared_states && id >= *h_.declared_states)
        b_.fail(line_place(line), std::string(what) + " " + std::to_string(id) +
                                      ", but 'States: " + std::to_string(*h_.declared_states) +
                                      "' numbers the states 0 to " +
                                      std::to_string(*h_.declared_states) + " - 1");
      n = std::max<std::uint64_t>(n, std::uint64_t{id} + 1);
    };
    for (std::size_t k = 0; k < h_.starts.size(); ++k)
      check(h_.starts[k], h_.start_lines[k], "initial state");
    for (const HoaState& s : h_.states) {
      check(s.id, s.line, "state");
      for (const auto& e : s.edges) check(e.target, e.line, "target state");
    }
    check_memory("the " + std::to_string(n) + " states of the HOA automaton",
                 saturating_mul(n, 160));
    body_of_.assign(n, -1);
    for (std::size_t i = 0; i < h_.states.size(); ++i) {
      const HoaState& s = h_.states[i];
      if (body_of_[s.id] >= 0)
        b_.fail(line_place(s.line),
                "state " + std::to_string(s.id) + " is listed twice (first on line " +
                    std::to_string(h_.states[static_cast<std::size_t>(body_of_[s.id])].line) + ")");
      body_of_[s.id] = static_cast<std::ptrdiff_t>(i);
    }
  }

  // Every edge has a guard: its own label, its state's, or the implicit one (the k-th of
  // exactly 2^AP unlabelled edges reads valuation k). Checked here; guard_of() gives it without
  // copying a table per edge (a state label's or an implicit one would cost 2^AP bits an edge).
  void label_edges() {
    const std::size_t valuations = std::size_t{1} << h_.propositions.size();
    for (const HoaState& s : h_.states) {
      const auto labelled = static_cast<std::size_t>(std::count_if(
          s.edges.begin(), s.edges.end(), [](const auto& e) { return e.label.has_value(); }));
      if (s.label) {
        if (labelled > 0)
          b_.fail(line_place(s.line), "state " + std::to_string(s.id) +
                                          " has a label, and so may its edges not (the "
                                          "state's label is theirs)");
      } else if (labelled > 0 && labelled < s.edges.size()) {
        const auto it = std::find_if(s.edges.begin(), s.edges.end(),
                                     [](const auto& e) { return !e.label.has_value(); });
        b_.fail(line_place(it->line), "an edge without a label among labelled ones (state " +
                                          std::to_string(s.id) +
                                          "): either every edge of a state has a label or none");
      } else if (labelled == 0 && !s.edges.empty()) {
        if (s.edges.size() != valuations)
          b_.fail(line_place(s.line),
                  "state " + std::to_string(s.id) + " has " + std::to_string(s.edges.size()) +
                      " edges without labels: implicit labels need exactly 2^AP = " +
                      std::to_string(valuations) + " of them, one per valuation");
      }
    }
  }

  // The guard of state s's k-th edge, or nullptr when its label is implicit (valuation k).
  static const Guard* guard_of(const HoaState& s, std::size_t k) {
    if (s.edges[k].label) return &*s.edges[k].label;
    return s.label ? &*s.label : nullptr;
  }

  // Finite words: a run that ends in state q, entered by an edge in the sets E, accepts when
  // the condition holds for marks(q) + E. A state entered both ways becomes two states.
  void decide_acceptance() {
    const std::size_t n = body_of_.size();
    accepting_.assign(n, false);
    twin_needed_.assign(n, false);
    for (std::size_t q = 0; q < n; ++q) accepting_[q] = h_.acceptance.holds(marks_of(q));
    for (HoaState& s : h_.states)
      for (auto& e : s.edges) {
        if (e.marks.empty()) continue;
        const bool bit = h_.acceptance.holds(merged(marks_of(e.target), e.marks));
        if (bit != accepting_[e.target]) twin_needed_[e.target] = true;
      }
  }
  const std::vector<std::uint32_t>& marks_of(std::size_t q) const {
    static const std::vector<std::uint32_t> none;
    return body_of_[q] < 0 ? none : h_.states[static_cast<std::size_t>(body_of_[q])].marks;
  }
  // The state a run is in after an edge: the target, or its twin of the other verdict.
  StateId entered(const frontend::HoaEdge& e) const {
    if (!twin_needed_[e.target] || e.marks.empty()) return ids_[e.target];
    const bool bit = h_.acceptance.holds(merged(marks_of(e.target), e.marks));
    return bit == accepting_[e.target] ? ids_[e.target] : twin_ids_[e.target];
  }

  // States by number (or by name, when every state has a distinct one), then the twins.
  void add_states() {
    const std::size_t n = body_of_.size();
    std::set<std::string> names;
    bool by_name = true;
    for (std::size_t q = 0; q < n && by_name; ++q)
      by_name = body_of_[q] >= 0 && h_.states[static_cast<std::size_t>(body_of_[q])].name &&
                !h_.states[static_cast<std::size_t>(body_of_[q])].name->empty() &&
                names.insert(*h_.states[static_cast<std::size_t>(body_of_[q])].name).second;
    names_.resize(n);
    ids_.resize(n);
    for (std::size_t q = 0; q < n; ++q) {
      const HoaState* s =
          body_of_[q] >= 0 ? &h_.states[static_cast<std::size_t>(body_of_[q])] : nullptr;
      names_[q] = by_name ? *s->name : std::to_string(q);
      const std::string place = s ? line_place(s->line) : "state " + std::to_string(q);
      if (auto problem = frontend::invalid_utf8_problem(names_[q], "state name"))
        b_.fail(place, *problem);
      ids_[q] = b_.add_state(names_[q], place);
      if (accepting_[q]) b_.add_accepting(ids_[q]);
    }
    twin_ids_.assign(n, 0);
    for (std::size_t q = 0; q < n; ++q) {
      if (!twin_needed_[q]) continue;
      std::string name =
          names_[q] + (accepting_[q] ? " (after a rejecting edge)" : " (after an accepting edge)");
      while (b_.find_state(name)) name += "'";
      twin_ids_[q] = b_.add_state(name, "state " + std::to_string(q));
      if (!accepting_[q]) b_.add_accepting(twin_ids_[q]);
    }
  }

  void add_letters() {
    for (const auto& ap : h_.propositions)
      if (auto problem = frontend::invalid_utf8_problem(ap, "atomic proposition"))
        b_.fail("", *problem);
    const std::uint32_t valuations = std::uint32_t{1} << h_.propositions.size();
    for (std::uint32_t v = 0; v < valuations; ++v)
      b_.add_letter(frontend::valuation_letter(v, h_.propositions), "AP");
  }

  // One transition per valuation that satisfies the edge's guard, counted against the memory
  // budget before any is added.
  void add_transitions() {
    std::uint64_t count = 0;
    for (const HoaState& s : h_.states)
      for (std::size_t k = 0; k < s.edges.size(); ++k) {
        std::uint64_t sat = 1;  // an implicit label
        if (const Guard* g = guard_of(s, k)) {
          sat = 0;
          for (std::uint64_t word : g->bits) sat += static_cast<std::uint64_t>(std::popcount(word));
        }
        count = saturating_add(count, sat * (twin_needed_[s.id] ? 2 : 1));
      }
    check_memory("the " + std::to_string(count) + " transitions of the HOA automaton",
                 saturating_mul(count, 160));
    const std::uint32_t valuations = std::uint32_t{1} << h_.propositions.size();
    for (const HoaState& s : h_.states)
      for (std::size_t k = 0; k < s.edges.size(); ++k) {
        const auto& e = s.edges[k];
        const std::string place = line_place(e.line);
        const StateId to = entered(e);
        auto add = [&](std::uint32_t v) {
          b_.add_transition(ids_[s.id], v, to, place);
          if (twin_needed_[s.id]) b_.add_transition(twin_ids_[s.id], v, to, place);
        };
        const Guard* g = guard_of(s, k);
        if (!g) {
          add(static_cast<std::uint32_t>(k));  // implicit: the k-th edge reads valuation k
          continue;
        }
        for (std::uint32_t v = 0; v < valuations; ++v)
          if (g->holds(v)) add(v);
      }
  }

  void add_initial_states() {
    if (h_.starts.empty() && options_.initial.empty())
      b_.fail("",
              "no 'Start:' header item: the automaton has no initial state, and its "
              "language is empty (--initial names one)");
    for (std::size_t k = 0; k < h_.starts.size(); ++k)
      b_.add_initial(ids_[h_.starts[k]], line_place(h_.start_lines[k]));
  }

  AutomatonBuilder& b_;
  HoaAutomaton h_;
  const CompletionOptions& options_;
  std::vector<std::ptrdiff_t> body_of_;  // by state number: its index in h_.states, or -1
  std::vector<bool> accepting_, twin_needed_;
  std::vector<std::string> names_;
  std::vector<StateId> ids_, twin_ids_;
};

}  // namespace

Automaton read_hoa_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  HoaAutomaton h = frontend::parse_hoa(text, b);
  if (!h.name.empty() && !frontend::invalid_utf8_problem(h.name, "name")) b.set_name(h.name);
  if (options.note) {
    options.note(file +
                 ": HOA read for finite words: a word is accepted when its run ends in a "
                 "state whose acceptance sets (with those of the edge that entered it) "
                 "satisfy '" +
                 h.acceptance.text + "'");
    for (const auto& item : h.ignored_headers)
      options.note(file + ": the header item '" + item + ":' is not one krc knows: ignored");
  }
  HoaAutomatonReader reader(b, std::move(h), options);
  reader.read();
  return b.build(options);
}

}  // namespace krc
