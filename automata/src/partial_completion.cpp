// What a partial DFA's missing transitions mean, decided here for every reader (the builder is
// the one place a file's automaton is made): automata/README.md, "Partial DFAs".
#include <set>

#include "krc/automata/automaton_builder.hpp"

namespace krc {

// An acceptor: some state accepts and the file carries no Mealy outputs and no Moore output
// for every state, so its output is acceptance (machine_outputs.hpp, default_output).
bool AutomatonBuilder::is_acceptor() const {
  return !accepting_.empty() && mealy_.empty() && moore_.size() != states_.size();
}

std::string AutomatonBuilder::undefined_output() const {
  std::set<std::string> taken;
  for (const auto& [key, output] : mealy_) taken.insert(output);
  for (const auto& [q, output] : moore_) taken.insert(output);
  std::string name = kUndefinedOutput;
  while (taken.count(name)) name += "'";
  return name;
}

// JFLAP, AALpy, AutomataLib, MONA and Spot mean an acceptor's missing transition as "reject
// from here on". AutomataLib and LearnLib leave a Mealy or Moore machine's missing transition
// undefined (its output is null, and so is every later one), and AALpy's step raises there:
// a sink state whose outputs are a name none of the file's outputs has says exactly that.
// A semiautomaton (no accepting state, no outputs) has nothing to say unless its format did.
std::string AutomatonBuilder::missing_meaning() const {
  if (is_acceptor()) return "rejects from there on";
  if (!mealy_.empty())
    return "outputs '" + undefined_output() +
           "', as does every later transition (AutomataLib, LearnLib and AALpy leave a "
           "missing transition undefined; no output of the file has that name)";
  if (!moore_.empty() && moore_.size() == states_.size())
    return "enters a state whose output is '" + undefined_output() +
           "' (AutomataLib, LearnLib and AALpy leave a missing transition undefined; no "
           "output of the file has that name)";
  return declared_missing_;
}

std::string AutomatonBuilder::completion_note(std::size_t missing, const std::string& sink) const {
  const char* what = is_acceptor()                     ? "a partial acceptor"
                     : !mealy_.empty()                 ? "a partial Mealy machine"
                     : moore_.size() == states_.size() ? "a partial Moore machine"
                                                       : "a partial automaton";
  return file_ + ": " + what + ": its " + std::to_string(missing) +
         (missing == 1 ? " missing transition goes" : " missing transitions go") + " to " +
         (is_acceptor() ? "a rejecting sink state '" : "a sink state '") + sink +
         "' (a missing transition " + missing_meaning() + "; --complete says nothing)";
}

void AutomatonBuilder::fail_partial(StateId q, LetterId a) const {
  fail(state_places_[q], "partial automaton: state '" + states_[q] +
                             "' has no transition on letter '" + letters_[a] +
                             "' (use --complete to add a sink state; a file with no accepting "
                             "state and no Mealy or Moore outputs gives a missing transition "
                             "no meaning, so it is not completed unasked)");
}

}  // namespace krc
