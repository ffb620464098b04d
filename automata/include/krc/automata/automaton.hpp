#pragma once
// A finite semiautomaton: named states, named letters, a total transition function and an
// initial state. Letters act on the right: delta(q, a) is the state after reading a in q.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace krc {

using StateId = std::uint32_t;
using LetterId = std::uint32_t;

// A transformation of {0..n-1}: image[q] is where q goes.
using Transformation = std::vector<StateId>;

class Automaton {
 public:
  Automaton() = default;
  // delta[a][q] is the state after letter a in state q. Throws std::invalid_argument when
  // the parts disagree (sizes, out-of-range targets, duplicate or empty names); frontends
  // check first so that they can name the place in the file.
  Automaton(std::string name, std::vector<std::string> states, std::vector<std::string> letters,
            std::vector<std::vector<StateId>> delta, StateId initial,
            std::vector<StateId> accepting = {}, std::string description = {});

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  std::size_t state_count() const { return states_.size(); }
  std::size_t letter_count() const { return letters_.size(); }
  const std::vector<std::string>& states() const { return states_; }
  const std::vector<std::string>& letters() const { return letters_; }
  const std::string& state_name(StateId q) const { return states_.at(q); }
  const std::string& letter_name(LetterId a) const { return letters_.at(a); }
  StateId initial() const { return initial_; }
  const std::vector<StateId>& accepting() const { return accepting_; }

  StateId step(StateId q, LetterId a) const { return delta_[a][q]; }
  // The transformation of the states induced by one letter.
  const Transformation& letter_action(LetterId a) const { return delta_[a]; }
  const std::vector<std::vector<StateId>>& transitions() const { return delta_; }

  // States after each prefix of the word, starting with `from` (size word.size() + 1).
  std::vector<StateId> run(std::span<const LetterId> word, StateId from) const;
  std::vector<StateId> run(std::span<const LetterId> word) const { return run(word, initial_); }

  // Index of a state or letter by name; -1 when absent.
  long find_state(const std::string& name) const;
  long find_letter(const std::string& name) const;

  bool operator==(const Automaton&) const = default;

 private:
  std::string name_, description_;
  std::vector<std::string> states_, letters_;
  std::vector<std::vector<StateId>> delta_;
  StateId initial_ = 0;
  std::vector<StateId> accepting_;
};

// What krc says of an automaton with no letters, or of its network, wherever that matters
// (compile, run, verify, info, the benches): one clause, so that every tool says the same thing
// and a test can find it. Each caller adds its own tail after it.
std::string empty_alphabet_clause();

}  // namespace krc
