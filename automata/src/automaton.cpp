#include "krc/automata/automaton.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "krc/automata/automaton_builder.hpp"

namespace krc {

namespace {
void require_unique_names(const std::vector<std::string>& names, const char* what) {
  std::unordered_set<std::string> seen;
  for (const auto& n : names) {
    if (n.empty()) throw std::invalid_argument(std::string("empty ") + what + " name");
    if (!seen.insert(n).second)
      throw std::invalid_argument(std::string("duplicate ") + what + " name '" + n + "'");
  }
}
}  // namespace

Automaton::Automaton(std::string name, std::vector<std::string> states,
                     std::vector<std::string> letters, std::vector<std::vector<StateId>> delta,
                     StateId initial, std::vector<StateId> accepting, std::string description)
    : name_(std::move(name)),
      description_(std::move(description)),
      states_(std::move(states)),
      letters_(std::move(letters)),
      delta_(std::move(delta)),
      initial_(initial),
      accepting_(std::move(accepting)) {
  if (states_.empty()) throw std::invalid_argument("an automaton needs at least one state");
  // No letters is allowed: such an automaton reads only the empty word (a JFLAP NFA whose
  // every transition is an epsilon one determinises to it); the backend compiles it to a
  // network of no layers, and each command that needs a letter says so.
  require_unique_names(states_, "state");
  require_unique_names(letters_, "letter");
  // Every network's vocabulary begins with this token; a letter by that name would make the
  // files krc writes ambiguous, so every reader refuses it, and so does this constructor.
  for (const auto& letter : letters_)
    if (letter == kReservedLetter)
      throw std::invalid_argument(std::string("the letter name '") + kReservedLetter +
                                  "' is reserved for the beginning-of-word token");
  if (delta_.size() != letters_.size())
    throw std::invalid_argument("transition table has " + std::to_string(delta_.size()) +
                                " rows for " + std::to_string(letters_.size()) + " letters");
  for (std::size_t a = 0; a < delta_.size(); ++a) {
    if (delta_[a].size() != states_.size())
      throw std::invalid_argument("letter '" + letters_[a] + "' maps " +
                                  std::to_string(delta_[a].size()) + " of " +
                                  std::to_string(states_.size()) + " states");
    for (StateId target : delta_[a])
      if (target >= states_.size())
        throw std::invalid_argument("letter '" + letters_[a] + "' leads to state index " +
                                    std::to_string(target) + ", out of range");
  }
  if (initial_ >= states_.size()) throw std::invalid_argument("initial state out of range");
  for (StateId q : accepting_)
    if (q >= states_.size()) throw std::invalid_argument("accepting state out of range");
  std::sort(accepting_.begin(), accepting_.end());
  accepting_.erase(std::unique(accepting_.begin(), accepting_.end()), accepting_.end());
}

std::vector<StateId> Automaton::run(std::span<const LetterId> word, StateId from) const {
  std::vector<StateId> trace;
  trace.reserve(word.size() + 1);
  trace.push_back(from);
  for (LetterId a : word) trace.push_back(from = delta_.at(a).at(from));
  return trace;
}

long Automaton::find_state(const std::string& name) const {
  auto it = std::find(states_.begin(), states_.end(), name);
  return it == states_.end() ? -1 : static_cast<long>(it - states_.begin());
}

long Automaton::find_letter(const std::string& name) const {
  auto it = std::find(letters_.begin(), letters_.end(), name);
  return it == letters_.end() ? -1 : static_cast<long>(it - letters_.begin());
}

std::string empty_alphabet_clause() {
  return "the alphabet is empty: the network reads only the empty word";
}

}  // namespace krc
