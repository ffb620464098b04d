#pragma once
// Internal header. What an edge label of a DOT automaton means, for the tools that write them:
//   "a"                      a letter (DFA)
//   "a/x", "a / x"           a Mealy transition: the input a (the output is not kept)
//   <a | b<br />x / y>       an HTML label (AALpy's TLS models, from StateLearner): the input
//                            part is what comes before the first <br>, and inputs joined by
//                            '|' are one edge each; tags are dropped, entities decoded. An HTML
//                            label without <br> reads like a quoted one.
//   "d:0.9"                  AALpy MDP ("input:probability"), "a/x:0.5" a stochastic Mealy
//                            machine, "0.5" a Markov chain: not deterministic automata.
#include <optional>
#include <string>
#include <vector>

namespace krc::frontend {

// The inputs an edge label stands for (one for plain and Mealy labels); `html`: the label
// was written <...> (Boost gives it with its brackets). Empty inputs are returned as "".
std::vector<std::string> edge_inputs(const std::string& label, bool html);

// The output of a Mealy label: "x" for "a / x" and for <a | b<br />x>; nullopt without one.
std::optional<std::string> edge_output(const std::string& label, bool html);

// A Moore state label: AALpy's records "s0|1" and "{ A | init }" (shape record) and
// AutomataLib's "0 / a": the state's name and its output; nullopt for other labels.
std::optional<std::pair<std::string, std::string>> moore_label(const std::string& label,
                                                               const std::string& shape);

// FlexFringe's label of a PAutomaC (probabilistic) model's edge: the symbol, a line break (a
// literal one inside the quotes, or DOT's escape \n) and the number of training traces that
// took the edge, "4\n2263". Returns the symbol ("4"), nullopt for any other label.
std::optional<std::string> pautomac_symbol(const std::string& label);

// AALpy's pushdown automata (its PDA's DOT labels "( / push(()", ") / pop(()"): the index of
// the first label whose output is a stack operation push(s) or pop(s), when every label with an
// output has one; nullopt otherwise (a Mealy machine may output "push(x)" among other outputs).
// Plain labels ("1", "+") are the PDA's moves that leave the stack alone.
std::optional<std::size_t> pushdown_label(const std::vector<std::string>& labels);

// The text of an HTML label <...>: tags dropped, entities decoded, trimmed.
std::string html_label_text(const std::string& label);

enum class ProbabilisticLabel { None, Mdp, StochasticMealy, MarkovChain };

// How `label` reads as a probabilistic label, and its probability (in [0, 1]) if it does.
struct ProbabilityReading {
  ProbabilisticLabel kind = ProbabilisticLabel::None;
  double probability = 0;
};
ProbabilityReading read_probability_label(const std::string& label);

// "an AALpy MDP (labels 'input:probability')" and the like, for messages.
std::string describe(ProbabilisticLabel kind);

}  // namespace krc::frontend
