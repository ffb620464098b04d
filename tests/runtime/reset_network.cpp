#include "reset_network.hpp"

#include "krc/automata/automaton_json.hpp"

namespace krc::test {

Automaton reset_automaton(const std::vector<std::string>& letters,
                          const std::vector<StateId>& reset_target, StateId states) {
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

Automaton last_letter_automaton() {
  return Automaton("last", {"start", "a", "b", "c"}, {"a", "b", "c"},
                   {{1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, 0);
}

Network last_letter_copy_network(int max_len, bool token_keys) {
  const Automaton last = last_letter_automaton();
  Network n;
  n.max_len = max_len;
  n.vocabulary = {"<bos>", "a", "b", "c"};
  n.states = last.states();
  n.automaton = automaton_to_json(last);
  for (int c = 0; c < 8; ++c)
    n.residual_labels.push_back(c < 4 ? "token " + std::to_string(c)
                                      : "copy " + std::to_string(c - 4));
  n.token_embedding = RowMatrix::Zero(4, 8);
  for (int t = 0; t < 4; ++t) n.token_embedding(t, t) = 1;
  n.position_embedding = RowMatrix::Zero(n.max_len + 1, 8);
  AttentionHead head;
  head.kind = HeadKind::Select;
  const int key_dim = token_keys ? 4 : 1;
  head.query = SparseMatrix(8, key_dim);
  head.key = SparseMatrix(8, key_dim);
  head.value = SparseMatrix(8, 4);
  head.output = SparseMatrix(4, 8);
  n.unembedding = SparseMatrix(8, 4);
  for (int t = 0; t < 4; ++t) {
    if (token_keys) head.key.insert(t, t) = 1;
    head.value.insert(t, t) = 1;
    head.output.insert(t, 4 + t) = 1;
    n.unembedding.insert(4 + t, t) = 1;
  }
  Layer layer;
  layer.heads.push_back(head);
  n.layers.push_back(layer);
  return n;
}

}  // namespace krc::test
