#pragma once
// One word through a network, as `krc run` and the Python Network.run show it: the letters
// read from the user's text, the network's state after every prefix with the margin of its
// choice, and the automaton's own state beside it. One definition for both front ends.
#include <Eigen/Core>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/forward.hpp"

namespace krc {

// The letters a user wrote (automata/README.md, "Letters on the command line"): an argument
// that is a letter is that letter, whatever it holds ("SYN(V,V,0)"); any other is split by
// tabs when it has one, else by spaces and the commas outside brackets, and a piece that is
// not a letter but spells one-character letters ("0110") is read letter by letter. Throws
// InputError at `place` ("command line", "word") naming the first unknown letter.
std::vector<LetterId> parse_word(const std::vector<std::string>& arguments,
                                 const Automaton& automaton, const std::string& place);

struct WordRun {
  std::vector<LetterId> word;
  Eigen::MatrixXd logits;         // [word.size() + 1, states]; row 0: <bos> alone
  std::vector<StateId> states;    // the network's argmax after every prefix
  std::vector<double> margins;    // best - second best logit; infinite with one state
  std::vector<StateId> expected;  // the automaton's states, the same places
  ForwardOptions options;         // the attention and arithmetic it ran in
  bool right() const;             // every state the automaton's, with a positive margin
};

// InputError at `place` unless a word of `letters` letters fits the network's max_len.
void check_word_length(const Network& network, std::size_t letters, const std::string& place);

// Runs `word` (at most the network's max_len letters, else InputError at `place`).
WordRun run_word(const Network& network, const Automaton& automaton, std::vector<LetterId> word,
                 const ForwardOptions& options, const std::string& place);
// The same through a pass already prepared (its network and options).
WordRun run_word(const ForwardPass& pass, const Automaton& automaton, std::vector<LetterId> word,
                 const std::string& place);

}  // namespace krc
