#include "reset_network.hpp"

#include "krc/automaton_json.hpp"

namespace krc::test {

Automaton reset_automaton(const std::vector<std::string>& letters, const std::vector<StateId>& reset_target,
                          StateId states) {
  std::vector<std::string> names{"start"};
  for (StateId s = 1; s < states; ++s) names.push_back("s" + std::to_string(s));
  std::vector<std::vector<StateId>> delta;
  for (StateId target : reset_target) delta.emplace_back(states, target);
  return Automaton("reset", names, letters, delta, 0);
}

Network reset_network(const Automaton& automaton, const ResetNetworkOptions& options) {
  Network n;
  n.max_len = options.max_len;
  n.vocabulary = {"<bos>"};
  for (const auto& l : automaton.letters()) n.vocabulary.push_back(l);
  n.states = automaton.states();
  n.automaton = automaton_to_json(automaton);
  n.compiler = {{"strategy", "hand-made reset network"}};
  const int vocabulary = static_cast<int>(n.vocabulary.size());
  for (int t = 0; t < vocabulary; ++t) n.residual_labels.push_back("token " + n.vocabulary[t]);
  n.token_embedding = RowMatrix::Zero(vocabulary, vocabulary);
  for (int t = 0; t < vocabulary; ++t)
    n.token_embedding(t, t) = (t > 0 && t - 1 == options.weak_letter) ? options.weak_weight : 1.0f;
  n.position_embedding = RowMatrix::Zero(n.max_len + 1, vocabulary);
  n.unembedding = SparseMatrix(vocabulary, static_cast<int>(n.states.size()));
  for (int t = 0; t < vocabulary; ++t) {
    StateId target = t == 0 ? automaton.initial() : automaton.step(0, static_cast<LetterId>(t - 1));
    if (t > 0 && t - 1 == options.wrong_letter) target = options.wrong_state;
    n.unembedding.insert(t, static_cast<int>(target)) = 1.0f;
  }
  return n;
}

}  // namespace krc::test
