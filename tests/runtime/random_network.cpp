#include "random_network.hpp"

#include "krc/automaton_json.hpp"

namespace krc::test {

namespace {
float random_weight(std::mt19937_64& rng) {
  return std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
}
int uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
}  // namespace

SparseMatrix random_sparse(std::mt19937_64& rng, int rows, int cols, double density) {
  std::vector<Eigen::Triplet<float, int>> triplets;
  std::bernoulli_distribution keep(density);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (keep(rng)) triplets.emplace_back(r, c, random_weight(rng));
  SparseMatrix m(rows, cols);
  m.setFromTriplets(triplets.begin(), triplets.end());
  return m;
}

Network random_network(std::mt19937_64& rng, const Automaton& automaton,
                       const RandomNetworkShape& shape) {
  Network n;
  n.max_len = shape.max_len;
  n.vocabulary.push_back("<bos>");
  for (const auto& l : automaton.letters()) n.vocabulary.push_back(l);
  n.states = automaton.states();
  n.automaton = automaton_to_json(automaton);
  n.compiler = {{"strategy", "random test network"}, {"seed_note", 0.1}};
  n.attention_scale = shape.scale;
  const int d = uniform(rng, 2, shape.max_d_model);
  for (int c = 0; c < d; ++c) n.residual_labels.push_back("dim " + std::to_string(c));
  const int vocabulary = static_cast<int>(n.vocabulary.size());
  n.token_embedding = random_sparse(rng, vocabulary, d, 0.6).toDense();
  n.position_embedding = random_sparse(rng, n.max_len + 1, d, 0.6).toDense();
  n.unembedding = random_sparse(rng, d, static_cast<int>(n.states.size()), 0.6);
  const int layers = uniform(rng, 1, shape.max_layers);
  for (int i = 0; i < layers; ++i) {
    Layer layer;
    layer.purpose = "random layer " + std::to_string(i);
    const int heads = uniform(rng, 0, shape.max_heads);
    for (int h = 0; h < heads; ++h) {
      AttentionHead head;
      head.name = "head " + std::to_string(h);
      head.kind = uniform(rng, 0, 1) ? HeadKind::Select : HeadKind::Average;
      const int qd = uniform(rng, 0, 4), vd = uniform(rng, 1, 4);
      head.query = random_sparse(rng, d, qd, shape.density);
      head.key = random_sparse(rng, d, qd, shape.density);
      head.value = random_sparse(rng, d, vd, shape.density);
      head.output = random_sparse(rng, vd, d, shape.density);
      layer.heads.push_back(std::move(head));
    }
    if (uniform(rng, 0, 3) != 0) {
      Mlp mlp;
      const int hidden = uniform(rng, 0, 24);
      mlp.in_weight = random_sparse(rng, hidden, d, shape.density);
      mlp.in_bias = Eigen::VectorXf(hidden);
      for (int u = 0; u < hidden; ++u)
        mlp.in_bias[u] = uniform(rng, 0, 2) ? random_weight(rng) : 0.0f;
      mlp.out_weight = random_sparse(rng, d, hidden, shape.density);
      mlp.out_bias = Eigen::VectorXf(d);
      for (int c = 0; c < d; ++c) mlp.out_bias[c] = uniform(rng, 0, 1) ? random_weight(rng) : 0.0f;
      if (hidden > 0) {
        const int split = uniform(rng, 0, hidden);
        mlp.blocks = {{"first part", 0, split, {}}, {"second part", split, hidden - split, {}}};
      }
      layer.mlp = std::move(mlp);
    }
    n.layers.push_back(std::move(layer));
  }
  return n;
}

std::vector<LetterId> random_word(std::mt19937_64& rng, int letters, int length) {
  std::vector<LetterId> word(length);
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(letters - 1));
  for (auto& a : word) a = letter(rng);
  return word;
}

}  // namespace krc::test
