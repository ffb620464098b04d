#include "tied_network.hpp"

#include <cmath>

#include "krc/automata/automaton_json.hpp"

namespace krc::test {

Automaton seen_b_automaton() {
  return Automaton("seen_b", {"none", "seen"}, {"a", "b"}, {{0, 1}, {1, 1}}, 0);
}

Network tied_network(AttentionKind attention, HeadKind kind, int max_len) {
  // Dims: 0 <bos>, 1 a, 2 b (the token one-hot), 3 a constant 1, 4 "none" evidence, 5 "seen"
  // evidence.
  Network n;
  n.max_len = max_len;
  n.vocabulary = {"<bos>", "a", "b"};
  n.states = {"none", "seen"};
  n.automaton = automaton_to_json(seen_b_automaton());
  n.compiler = {{"strategy", "hand-made tied network"}};
  n.residual_labels = {"<bos>", "a", "b", "one", "none evidence", "seen evidence"};
  n.token_embedding = RowMatrix::Zero(3, 6);
  for (int t = 0; t < 3; ++t) n.token_embedding(t, t) = 1.0f;
  n.position_embedding = RowMatrix::Zero(max_len + 1, 6);
  n.position_embedding.col(3).setOnes();
  n.attention_scale = 3.0f;
  n.attention = attention;
  AttentionHead head;
  head.name = "tied letters";
  head.kind = kind;
  head.query = SparseMatrix(6, 1);
  head.query.insert(3, 0) = 1.0f;
  head.key = SparseMatrix(6, 1);
  head.key.insert(1, 0) = 1.0f;
  head.key.insert(2, 0) = 1.0f;
  head.value = SparseMatrix(6, 2);
  head.value.insert(0, 0) = 100.0f;
  head.value.insert(2, 1) = 1.0f;
  head.output = SparseMatrix(2, 6);
  head.output.insert(0, 4) = 1.0f;
  head.output.insert(1, 5) = 1.0f;
  n.unembedding = SparseMatrix(6, 2);
  n.unembedding.insert(3, 0) = 1.0f / static_cast<float>(2 * (max_len + 1));
  n.unembedding.insert(4, 0) = 1.0f;
  n.unembedding.insert(5, 1) = 1.0f;
  Layer layer;
  layer.purpose = "the mean over tied letters";
  layer.heads.push_back(head);
  n.layers.push_back(layer);
  n.check_shapes();
  return n;
}

Eigen::VectorXd tied_network_weights(AttentionKind attention, HeadKind kind, int t) {
  Eigen::VectorXd p = Eigen::VectorXd::Zero(t + 1);
  if (t == 0) {
    p[0] = 1.0;
  } else if (attention == AttentionKind::Hardmax) {
    p.tail(t).setConstant(1.0 / t);
  } else if (attention == AttentionKind::Hard && kind == HeadKind::Select) {
    p[t] = 1.0;
  } else {
    const double e3 = std::exp(3.0);
    p[0] = 1.0 / (1.0 + t * e3);
    p.tail(t).setConstant(e3 / (1.0 + t * e3));
  }
  return p;
}

}  // namespace krc::test
