#include "krc/automaton_builder.hpp"

#include <algorithm>

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
  auto [it, inserted] =
      transitions_.emplace(std::make_pair(from, letter), std::make_pair(to, place));
  if (!inserted && it->second.first != to)
    fail(place, "nondeterminism: state '" + states_.at(from) + "' already goes to '" +
                    states_.at(it->second.first) + "' on letter '" + letters_.at(letter) + "' (" +
                    it->second.second + "), here to '" + states_.at(to) + "'");
}

void AutomatonBuilder::set_initial(StateId q, const std::string& place) {
  if (initial_ && *initial_ != q)
    fail(place,
         "second initial state '" + states_.at(q) + "' (already '" + states_.at(*initial_) + "')");
  initial_ = q;
}

Automaton AutomatonBuilder::build(const BuildOptions& options) const {
  if (states_.empty()) fail("", "the automaton has no states");
  if (letters_.empty()) fail("", "the alphabet is empty");
  if (!initial_ && options.initial.empty())
    fail("", "no initial state (name one with --initial STATE)");

  std::vector<std::string> states = states_;
  std::vector<std::vector<StateId>> delta(letters_.size(), std::vector<StateId>(states_.size(), 0));
  std::optional<StateId> sink;
  for (StateId q = 0; q < states_.size(); ++q) {
    for (LetterId a = 0; a < letters_.size(); ++a) {
      auto it = transitions_.find({q, a});
      if (it != transitions_.end()) {
        delta[a][q] = it->second.first;
        continue;
      }
      if (!options.add_sink)
        fail(state_places_[q], "partial automaton: state '" + states_[q] +
                                   "' has no transition on letter '" + letters_[a] +
                                   "' (use --complete to add a sink state)");
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
  StateId initial = initial_.value_or(0);
  if (!options.initial.empty()) {
    auto it = std::find(states.begin(), states.end(), options.initial);
    if (it == states.end()) fail("", unknown_initial_problem(options.initial, states));
    initial = static_cast<StateId>(it - states.begin());
  }
  return Automaton(name_, std::move(states), letters_, std::move(delta), initial, accepting_,
                   description_);
}

}  // namespace krc
