#include "dot_refusals.hpp"

#include <optional>

#include "dot_labels.hpp"
#include "text.hpp"

namespace krc::frontend {

namespace {

// Refuses a file whose edge labels are all probabilistic ("d:0.9", "a/x:0.5", "0.5") with at
// least one probability strictly between 0 and 1: an AALpy MDP, stochastic Mealy machine or
// Markov chain, which a letter-per-label reading would turn into nonsense letters.
void refuse_probabilistic(const AutomatonBuilder& b, const std::vector<std::string>& labels,
                          const std::vector<std::string>& places) {
  bool mdp = false, stochastic_mealy = false;
  std::optional<std::size_t> fractional;  // the first label with 0 < p < 1
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const auto reading = read_probability_label(labels[k]);
    if (reading.kind == ProbabilisticLabel::None) return;
    mdp = mdp || reading.kind == ProbabilisticLabel::Mdp;
    stochastic_mealy = stochastic_mealy || reading.kind == ProbabilisticLabel::StochasticMealy;
    if (!fractional && reading.probability > 0 && reading.probability < 1) fractional = k;
  }
  if (!fractional) return;
  const ProbabilisticLabel kind = stochastic_mealy ? ProbabilisticLabel::StochasticMealy
                                  : mdp            ? ProbabilisticLabel::Mdp
                                                   : ProbabilisticLabel::MarkovChain;
  b.fail(places[*fractional], "this is " + describe(kind) + ", not a deterministic automaton: '" +
                                  labels[*fractional] +
                                  "' is a transition probability; krc reads DFAs and Mealy "
                                  "machines");
}

}  // namespace

void refuse_other_machines(const AutomatonBuilder& b, const std::vector<std::string>& labels,
                           const std::vector<std::string>& places) {
  refuse_probabilistic(b, labels, places);
  if (auto k = pushdown_label(labels))
    b.fail(places[*k],
           "this is a pushdown automaton (AALpy's PDA: labels 'input / push(s)' and "
           "'input / pop(s)' move a stack, '" +
               trim(labels[*k]) +
               "' here), not a finite automaton: its language need not be regular, "
               "and krc reads finite automata");
}

}  // namespace krc::frontend
