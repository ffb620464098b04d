#include "krc/runtime/network.hpp"

#include <stdexcept>

#include "krc/automata/name_table.hpp"

namespace krc {

namespace {
constexpr NameTable<HeadKind> kHeadKindNames{"head kind", {"select", "average"}};
constexpr NameTable<AttentionKind> kAttentionKindNames{"attention kind",
                                                       {"softmax", "hard", "hardmax"}};
}  // namespace

const char* to_string(HeadKind kind) { return kHeadKindNames.name(kind); }
const char* to_string(AttentionKind kind) { return kAttentionKindNames.name(kind); }
HeadKind head_kind_from_string(const std::string& s) { return kHeadKindNames.parse(s); }
AttentionKind attention_kind_from_string(const std::string& s) {
  return kAttentionKindNames.parse(s);
}
std::vector<std::string> attention_kind_names() { return kAttentionKindNames.names(); }

NetworkSize Network::size() const {
  NetworkSize s;
  s.layers = static_cast<int>(layers.size());
  s.d_model = d_model();
  auto dense = [&](long long rows, long long cols) { s.parameters += rows * cols; };
  auto count_sparse = [&](const SparseMatrix& m) {
    dense(m.rows(), m.cols());
    for (int k = 0; k < m.outerSize(); ++k)
      for (SparseMatrix::InnerIterator it(m, k); it; ++it)
        if (it.value() != 0.0f) ++s.nonzeros;
  };
  auto count_dense = [&](const auto& m) {
    dense(m.rows(), m.cols());
    s.nonzeros += (m.array() != 0.0f).count();
  };
  count_dense(token_embedding);
  count_dense(position_embedding);
  count_sparse(unembedding);
  for (const auto& layer : layers) {
    s.heads += static_cast<int>(layer.heads.size());
    for (const auto& h : layer.heads) {
      count_sparse(h.query);
      count_sparse(h.key);
      count_sparse(h.value);
      count_sparse(h.output);
    }
    if (layer.mlp) {
      s.mlp_hidden.push_back(layer.mlp->hidden());
      count_sparse(layer.mlp->in_weight);
      count_dense(layer.mlp->in_bias);
      count_sparse(layer.mlp->out_weight);
      count_dense(layer.mlp->out_bias);
    } else {
      s.mlp_hidden.push_back(0);
    }
  }
  return s;
}

void Network::check_shapes() const {
  const long d = d_model();
  auto expect = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
  };
  expect(max_len >= 1, "max_len must be at least 1");
  // <bos> alone is a network over the empty alphabet: it reads only the empty word.
  expect(!vocabulary.empty(), "vocabulary needs <bos>");
  expect(!states.empty(), "no states");
  expect(
      token_embedding.rows() == static_cast<long>(vocabulary.size()) && token_embedding.cols() == d,
      "embed.token has the wrong shape");
  expect(position_embedding.rows() == max_len + 1 && position_embedding.cols() == d,
         "embed.position has the wrong shape");
  expect(unembedding.rows() == d && unembedding.cols() == static_cast<long>(states.size()),
         "unembed has the wrong shape");
  int next = 0;
  for (const auto& s : subspaces) {
    expect(s.first == next && s.width >= 1 && s.first + s.width <= d,
           "residual subspace '" + s.name + "' does not continue the ones before it");
    next += s.width;
  }
  expect(subspaces.empty() || next == d, "the residual subspaces do not cover d_model");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string at = "layers." + std::to_string(i);
    for (std::size_t h = 0; h < layers[i].heads.size(); ++h) {
      const auto& head = layers[i].heads[h];
      const std::string hat = at + ".attn head " + std::to_string(h);
      expect(head.query.rows() == d && head.key.rows() == d && head.value.rows() == d,
             hat + ": q/k/v must have d_model rows");
      expect(head.query.cols() == head.key.cols(), hat + ": q and k differ in width");
      expect(head.output.rows() == head.value.cols() && head.output.cols() == d,
             hat + ": o must be [head_dim, d_model]");
    }
    if (const auto& m = layers[i].mlp) {
      expect(m->in_weight.cols() == d && m->in_weight.rows() == m->in_bias.size(),
             at + ".mlp.in has the wrong shape");
      expect(m->out_weight.rows() == d && m->out_weight.cols() == m->in_bias.size() &&
                 m->out_bias.size() == d,
             at + ".mlp.out has the wrong shape");
    }
  }
}

}  // namespace krc
