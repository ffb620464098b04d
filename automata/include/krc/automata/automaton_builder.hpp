#pragma once
// Collects states, letters and transitions as a frontend reads them, then checks the whole
// and builds an Automaton. Every problem is reported as an InputError naming the file and
// the place the frontend recorded (line, JSON pointer), so all formats report alike.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/machine_outputs.hpp"

namespace krc {

// The name of a compiled network's beginning-of-word token (weights_file.hpp): no letter may
// take it, or the network's vocabulary would list it twice and krc could not read it back.
inline constexpr const char* kReservedLetter = "<bos>";

// The Mealy output of a transition, and the Moore output of a state, that a partial machine's
// file leaves undefined (automata/README.md, "Partial DFAs"): the transitions a completion adds
// output it, and the sink state's Moore output is it. Primed ("(undefined)'") when the file
// itself has an output of that name, so that it never stands for one of the file's outputs.
inline constexpr const char* kUndefinedOutput = "(undefined)";

// What the command line adds to a description: completion of a partial DFA, the initial
// state (--initial; without it and without a start marker the first state listed is initial)
// and whether an NFA is determinised (the subset construction, bounded by max_subset_states
// and the memory budget) or refused (--no-determinise).
struct BuildOptions {
  // Complete any partial DFA with a sink state; without it acceptors, Mealy and Moore machines
  // and files whose format gives a missing transition a meaning are completed (with a note),
  // semiautomata refused (AutomatonBuilder::build).
  bool add_sink = false;
  std::string sink_name = "sink";  // made unique if a state already has this name
  std::string initial;             // "" = the file's; else a state's name (overrides the file)
  bool determinise = true;         // false: nondeterminism and epsilon transitions are errors
  std::size_t max_subset_states = std::size_t{1} << 16;
  // Told what a convention decided (the first state is initial, an NFA was determinised):
  // the krc command prints it on standard error. Unset: nothing is said.
  std::function<void(const std::string&)> note;
  // Filled with the outputs the file carries (Mealy, Moore), when set.
  MachineOutputs* outputs = nullptr;
};
using CompletionOptions = BuildOptions;  // the name the readers' signatures were written with

// "--initial 'x' is not a state of the automaton (its states: 'a', 'b', ...)".
std::string unknown_initial_problem(const std::string& name,
                                    const std::vector<std::string>& states);

class AutomatonBuilder {
 public:
  explicit AutomatonBuilder(std::string file) : file_(std::move(file)) {}

  void set_name(std::string name) { name_ = std::move(name); }
  void set_description(std::string d) { description_ = std::move(d); }

  // Declares a state or letter; a second declaration of the same name, an empty name and the
  // reserved letter kReservedLetter are errors.
  StateId add_state(const std::string& name, const std::string& place);
  LetterId add_letter(const std::string& name, const std::string& place);
  // Returns the letter, declaring it on first use (formats whose alphabet is implicit).
  LetterId letter(const std::string& name, const std::string& place);

  std::optional<StateId> find_state(const std::string& name) const;
  std::optional<LetterId> find_letter(const std::string& name) const;
  // Like find_state, but an unknown name is an InputError at `place`.
  StateId state(const std::string& name, const std::string& place) const;

  // A second, different target for the same (state, letter) is nondeterminism: build()
  // determinises, or refuses it naming both places when asked not to.
  void add_transition(StateId from, LetterId letter, StateId to, const std::string& place);
  // The Mealy output of the transition (from, letter) (its first target's), and a state's
  // Moore output.
  void add_output(StateId from, LetterId letter, const std::string& output) {
    mealy_.emplace(std::make_pair(from, letter), output);
  }
  void set_state_output(StateId q, std::string output) { moore_[q] = std::move(output); }
  // An epsilon (JFLAP's lambda) transition: build() determinises, or refuses it.
  void add_epsilon(StateId from, StateId to, const std::string& place);
  void set_initial(StateId q, const std::string& place);
  // One more initial state (HOA's several Start: items, DOT's several __start markers): with
  // more than one the automaton is an NFA, determinised from all of them (or refused).
  void add_initial(StateId q, const std::string& place);
  void add_accepting(StateId q) { accepting_.push_back(q); }
  // Where a state was declared, for "state X has no transition on Y" messages.
  void set_state_place(StateId q, std::string place) { state_places_.at(q) = std::move(place); }

  std::size_t state_count() const { return states_.size(); }
  std::size_t letter_count() const { return letters_.size(); }

  // Checks totality, the initial state and a non-empty alphabet, then builds; an NFA is
  // determinised from its initial state (subset_construction.hpp). A partial DFA is completed
  // with a sink state when asked (add_sink) or when its missing transitions mean something
  // definite (missing_meaning: an acceptor rejects, a Mealy or Moore machine outputs
  // undefined_output(), a format declared one), said through options.note; otherwise (a
  // semiautomaton) it is an error. The one place every reader's partial machine is decided.
  Automaton build(const BuildOptions& options = {}) const;
  // A reader whose format means a missing transition as something definite though the file
  // has no outputs (FlexFringe's PAutomaC models: no training trace went on that way) says so
  // here, in words for the note; such a semiautomaton is completed by default too.
  void set_missing_meaning(std::string meaning) { declared_missing_ = std::move(meaning); }
  // kUndefinedOutput, primed until no Mealy or Moore output of the file has its name.
  std::string undefined_output() const;
  bool has_initial() const { return initial_.has_value(); }
  // Some state accepts, and there are no Mealy outputs nor a Moore output for every state.
  bool is_acceptor() const;
  std::size_t initial_count() const { return initial_ ? 1 + also_initial_.size() : 0; }

  const std::string& file() const { return file_; }
  [[noreturn]] void fail(const std::string& place, const std::string& problem) const {
    throw InputError(file_, place, problem);
  }

 private:
  std::string file_, name_, description_;
  std::vector<std::string> states_, letters_, state_places_;
  std::map<std::string, StateId> state_index_;
  std::map<std::string, LetterId> letter_index_;
  StateId initial_state(const BuildOptions& options) const;
  Automaton build_deterministic(const BuildOptions& options) const;
  Automaton build_determinised(const BuildOptions& options) const;
  // What the file's missing transitions mean, in words for the note ("" for a semiautomaton,
  // whose missing transitions mean nothing until --complete), and the note itself.
  std::string missing_meaning() const;
  std::string completion_note(std::size_t missing, const std::string& sink) const;
  [[noreturn]] void fail_partial(StateId q, LetterId a) const;
  std::string declared_missing_;

  struct Target {
    StateId to;
    std::string place;
  };
  // Every target of (state, letter), the first one first; more than one is nondeterminism.
  std::map<std::pair<StateId, LetterId>, std::vector<Target>> transitions_;
  // The outputs as tables over the built states; `sink`, if added, is the last state.
  void fill_outputs(const BuildOptions& options, std::size_t states,
                    std::optional<StateId> sink) const;

  std::map<std::pair<StateId, LetterId>, std::string> mealy_;
  std::map<StateId, std::string> moore_;
  std::vector<std::vector<StateId>> epsilon_;  // by state
  std::string first_epsilon_place_;
  // The first nondeterminism met, for --no-determinise: its place and problem.
  std::optional<std::pair<std::string, std::string>> first_nondeterminism_;
  std::optional<StateId> initial_;
  std::vector<StateId> also_initial_;  // further initial states, after initial_
  std::string second_initial_place_;
  std::vector<StateId> accepting_;
};

}  // namespace krc
