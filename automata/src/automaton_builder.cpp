#include "krc/automata/automaton_builder.hpp"

#include <algorithm>

#include "krc/automata/memory_budget.hpp"
#include "krc/automata/subset_construction.hpp"

namespace krc {

std::string unknown_initial_problem(const std::string& name,
                                    const std::vector<std::string>& states) {
  std::string list;
  const std::size_t shown = std::min<std::size_t>(states.size(), 10);
  for (std::size_t i = 0; i < shown; ++i) list += (i ? ", '" : "'") + states[i] + "'";
  if (shown < states.size()) list += " and " + std::to_string(states.size() - shown) + " more";
  return "--initial '" + name + "' is not a state of the automaton (its states: " + list + ")";
}

StateId AutomatonBuilder::add_state(const std::string& name, const std::string& place) {
  if (name.empty()) fail(place, "empty state name");
  if (state_index_.count(name)) fail(place, "duplicate state name '" + name + "'");
  auto id = static_cast<StateId>(states_.size());
  states_.push_back(name);
  state_places_.push_back(place);
  state_index_.emplace(name, id);
  return id;
}

LetterId AutomatonBuilder::add_letter(const std::string& name, const std::string& place) {
  if (name.empty()) fail(place, "empty letter name");
  if (name == kReservedLetter)
    fail(place, "the letter name '" + name +
                    "' is reserved: a compiled network's token 0 is <bos>, the start of every "
                    "word, and its vocabulary lists it before the letters");
  if (letter_index_.count(name)) fail(place, "duplicate letter '" + name + "'");
  auto id = static_cast<LetterId>(letters_.size());
  letters_.push_back(name);
  letter_index_.emplace(name, id);
  return id;
}

LetterId AutomatonBuilder::letter(const std::string& name, const std::string& place) {
  if (auto found = find_letter(name)) return *found;
  return add_letter(name, place);
}

std::optional<StateId> AutomatonBuilder::find_state(const std::string& name) const {
  auto it = state_index_.find(name);
  if (it == state_index_.end()) return std::nullopt;
  return it->second;
}

std::optional<LetterId> AutomatonBuilder::find_letter(const std::string& name) const {
  auto it = letter_index_.find(name);
  if (it == letter_index_.end()) return std::nullopt;
  return it->second;
}

StateId AutomatonBuilder::state(const std::string& name, const std::string& place) const {
  if (auto found = find_state(name)) return *found;
  fail(place, "unknown state '" + name + "'");
}

void AutomatonBuilder::add_transition(StateId from, LetterId letter, StateId to,
                                      const std::string& place) {
  std::vector<Target>& targets = transitions_[{from, letter}];
  for (const Target& t : targets)
    if (t.to == to) return;
  if (!targets.empty() && !first_nondeterminism_)
    first_nondeterminism_.emplace(
        place, "nondeterminism: state '" + states_.at(from) + "' already goes to '" +
                   states_.at(targets.front().to) + "' on letter '" + letters_.at(letter) + "' (" +
                   targets.front().place + "), here to '" + states_.at(to) + "'");
  targets.push_back({to, place});
}

void AutomatonBuilder::add_epsilon(StateId from, StateId to, const std::string& place) {
  if (epsilon_.size() <= from) epsilon_.resize(states_.size());
  epsilon_.at(from).push_back(to);
  if (first_epsilon_place_.empty()) first_epsilon_place_ = place.empty() ? "?" : place;
}

void AutomatonBuilder::set_initial(StateId q, const std::string& place) {
  if (initial_ && *initial_ != q)
    fail(place,
         "second initial state '" + states_.at(q) + "' (already '" + states_.at(*initial_) + "')");
  initial_ = q;
}

void AutomatonBuilder::add_initial(StateId q, const std::string& place) {
  if (!initial_) {
    initial_ = q;
    return;
  }
  if (*initial_ == q ||
      std::find(also_initial_.begin(), also_initial_.end(), q) != also_initial_.end())
    return;
  also_initial_.push_back(q);
  if (second_initial_place_.empty()) second_initial_place_ = place.empty() ? "?" : place;
}

// The file's start marker, else the first state listed (the Automata Wiki's and LearnLib's
// convention for files without one, said through options.note); --initial overrides both.
StateId AutomatonBuilder::initial_state(const BuildOptions& options) const {
  if (!options.initial.empty()) {
    auto it = state_index_.find(options.initial);
    if (it == state_index_.end()) fail("", unknown_initial_problem(options.initial, states_));
    return it->second;
  }
  if (initial_) return *initial_;
  if (options.note)
    options.note(file_ + ": no start marker: the first state listed, '" + states_.front() +
                 "', is initial (the Automata Wiki's and LearnLib's convention; --initial "
                 "names another)");
  return 0;
}

Automaton AutomatonBuilder::build(const BuildOptions& options) const {
  if (states_.empty()) fail("", "the automaton has no states");
  // No letters (no edges, or epsilon edges only) builds an automaton that reads only the
  // empty word: after the subset construction, the initial state's epsilon closure alone.
  // --initial names one initial state, which overrides the file's several.
  const bool several_initial = !also_initial_.empty() && options.initial.empty();
  const bool nondeterministic =
      first_nondeterminism_ || !first_epsilon_place_.empty() || several_initial;
  if (!nondeterministic) return build_deterministic(options);
  if (!options.determinise) {
    if (first_nondeterminism_) fail(first_nondeterminism_->first, first_nondeterminism_->second);
    if (several_initial)
      fail(second_initial_place_, "a second initial state '" + states_.at(also_initial_.front()) +
                                      "' (besides '" + states_.at(*initial_) +
                                      "'): with --no-determinise krc reads one initial state");
    fail(first_epsilon_place_,
         "an epsilon transition (an empty input): with --no-determinise krc reads one letter "
         "per transition");
  }
  return build_determinised(options);
}

Automaton AutomatonBuilder::build_deterministic(const BuildOptions& options) const {
  // A description whose alphabet is not spelled out letter by letter (HOA's 2^AP valuations,
  // a declared state count) can ask for a table far larger than its text: checked first.
  check_memory(
      "the transition table of '" + name_ + "' (" + std::to_string(states_.size() + 1) +
          " states, " + std::to_string(letters_.size()) + " letters)",
      saturating_mul(saturating_mul(states_.size() + 1, letters_.size()), 2 * sizeof(StateId)));
  std::vector<std::string> states = states_;
  std::vector<std::vector<StateId>> delta(letters_.size(), std::vector<StateId>(states_.size(), 0));
  std::optional<StateId> sink;
  std::size_t missing = 0;
  const bool by_default = !missing_meaning().empty();
  for (StateId q = 0; q < states_.size(); ++q) {
    for (LetterId a = 0; a < letters_.size(); ++a) {
      auto it = transitions_.find({q, a});
      if (it != transitions_.end()) {
        delta[a][q] = it->second.front().to;
        continue;
      }
      if (!options.add_sink && !by_default) fail_partial(q, a);
      ++missing;
      if (!sink) {
        std::string name = options.sink_name;
        while (state_index_.count(name)) name += "'";
        sink = static_cast<StateId>(states.size());
        states.push_back(name);
      }
      delta[a][q] = *sink;
    }
  }
  if (sink)
    for (auto& row : delta) row.push_back(*sink);
  if (sink && !options.add_sink && options.note)
    options.note(completion_note(missing, states.back()));
  fill_outputs(options, states.size(), sink);
  StateId initial = 0;
  if (!options.initial.empty() && sink && options.initial == states.back())
    initial = *sink;
  else
    initial = initial_state(options);
  return Automaton(name_, std::move(states), letters_, std::move(delta), initial, accepting_,
                   description_);
}

// The outputs read, as tables over the built automaton's states (the sink, if any, last). A
// transition the completion added, and the sink's Moore output, are undefined_output(); a
// transition of the file without an output (a file mixing 'a' and 'a / x' labels) outputs "".
// A Moore table needs every file state to have an output.
void AutomatonBuilder::fill_outputs(const BuildOptions& options, std::size_t states,
                                    std::optional<StateId> sink) const {
  if (!options.outputs) return;
  *options.outputs = {};
  const std::string undefined = sink ? undefined_output() : "";
  if (!mealy_.empty()) {
    options.outputs->mealy.assign(letters_.size(), std::vector<std::string>(states));
    for (LetterId a = 0; a < letters_.size(); ++a)
      for (StateId q = 0; q < states; ++q)
        if (q == sink || !transitions_.count({q, a})) options.outputs->mealy[a][q] = undefined;
    for (const auto& [key, output] : mealy_) options.outputs->mealy[key.second][key.first] = output;
  }
  if (!moore_.empty() && moore_.size() == states_.size()) {
    options.outputs->moore.assign(states, undefined);
    for (const auto& [q, output] : moore_) options.outputs->moore[q] = output;
  }
}

// An NFA: the subset construction from the initial state (missing transitions are the empty
// set, so --complete is not needed), then what it made is said through options.note.
Automaton AutomatonBuilder::build_determinised(const BuildOptions& options) const {
  Nfa nfa;
  nfa.name = name_;
  nfa.description = description_;
  nfa.states = states_;
  nfa.letters = letters_;
  nfa.initial = initial_state(options);
  if (options.initial.empty()) nfa.also_initial = also_initial_;
  nfa.accepting = accepting_;
  nfa.targets.assign(letters_.size(), std::vector<std::vector<StateId>>(states_.size()));
  for (const auto& [key, targets] : transitions_)
    for (const Target& t : targets) nfa.targets[key.second][key.first].push_back(t.to);
  nfa.epsilon = epsilon_;
  nfa.epsilon.resize(states_.size());
  Automaton dfa = determinise(nfa, options.max_subset_states);
  if (options.outputs) *options.outputs = {};  // an NFA's outputs do not determinise
  if (options.note && (!mealy_.empty() || !moore_.empty()))
    options.note(file_ +
                 ": the NFA's Mealy and Moore outputs are dropped (the subset "
                 "automaton keeps its accepting states)");
  std::string from = "'" + states_[nfa.initial] + "'";
  for (StateId q : nfa.also_initial) from += ", '" + states_[q] + "'";
  if (options.note)
    options.note(file_ + ": nondeterministic (" +
                 (first_nondeterminism_           ? "several targets for one state and letter"
                  : !first_epsilon_place_.empty() ? "epsilon transitions"
                                                  : "several initial states") +
                 "): determinised by the subset construction from " + from + " into " +
                 std::to_string(dfa.state_count()) + " subset states (" +
                 std::to_string(states_.size()) + " NFA states; --no-determinise refuses NFAs)");
  return dfa;
}

}  // namespace krc
