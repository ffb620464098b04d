#include "random_network.hpp"

#include <cmath>

#include "krc/automata/automaton_json.hpp"

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

SparseMatrix filtered(const SparseMatrix& m, const std::function<bool(int, int)>& keep) {
  std::vector<Eigen::Triplet<float, int>> entries;
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      if (keep(static_cast<int>(it.row()), static_cast<int>(it.col())))
        entries.emplace_back(it.row(), it.col(), it.value());
  SparseMatrix out(m.rows(), m.cols());
  out.setFromTriplets(entries.begin(), entries.end());
  return out;
}

Network repeated_key_network(std::mt19937_64& rng, const Automaton& a, int max_len) {
  RandomNetworkShape shape;
  shape.max_len = max_len;
  shape.max_d_model = 12;
  Network n;
  do n = random_network(rng, a, shape);
  while (n.d_model() < 6);
  const int width = n.d_model();
  // Dims: 0 the BOS flag, [1, k) the token's, k the counter's query, > k free.
  const int k = 2 + static_cast<int>(rng() % 2);
  n.position_embedding.leftCols(k + 1).setZero();
  n.token_embedding.col(0).setZero();
  n.token_embedding(0, 0) = 1.0f;
  n.token_embedding.col(k).setZero();
  for (int t = 0; t <= max_len; ++t)
    n.position_embedding(t, k) = static_cast<float>(std::log(max_len + 1.0 - t));
  auto writes_free_dims = [k](int, int c) { return c > k; };
  for (auto& layer : n.layers) {
    for (auto& head : layer.heads) {
      head.key = filtered(random_sparse(rng, width, static_cast<int>(head.key.cols()), 0.6),
                          [k](int r, int) { return r < k; });
      head.output = filtered(head.output, writes_free_dims);
    }
    if (layer.mlp) {
      layer.mlp->out_weight = filtered(layer.mlp->out_weight, [k](int r, int) { return r > k; });
      layer.mlp->out_bias.head(k + 1).setZero();
    }
  }
  AttentionHead counter;
  counter.name = "counter";
  counter.kind = HeadKind::Average;
  counter.query = SparseMatrix(width, 1);
  counter.query.insert(k, 0) = 1.0f;
  counter.key = SparseMatrix(width, 1);
  counter.key.insert(0, 0) = 1.0f;
  counter.value = filtered(random_sparse(rng, width, 1, 0.5), [](int r, int) { return r > 0; });
  counter.output = SparseMatrix(1, width);
  counter.output.insert(0, width - 1) = static_cast<float>(max_len + 1);
  n.layers[0].heads.push_back(counter);
  n.attention_scale = 1.0f;  // the counter's scores are exact logs
  n.check_shapes();
  return n;
}

std::vector<LetterId> random_word(std::mt19937_64& rng, int letters, int length) {
  std::vector<LetterId> word(length);
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(letters - 1));
  for (auto& a : word) a = letter(rng);
  return word;
}

}  // namespace krc::test
