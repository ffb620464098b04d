#include "forged_weights.hpp"

#include <nlohmann/json.hpp>

#include "krc/runtime/safetensors.hpp"

namespace krc::test {

namespace {

using nlohmann::json;

// X as X.indices [0, rank] and X.values [0]: no nonzeros, any dense shape.
void empty_sparse(TensorFile& file, json& sparse, const std::string& name,
                  const std::vector<std::int64_t>& shape) {
  file.tensors[name + ".indices"] =
      make_i32_tensor({0, static_cast<std::int64_t>(shape.size())}, {});
  file.tensors[name + ".values"] = make_f32_tensor({0}, {});
  sparse[name] = shape;
}

}  // namespace

std::string forged_weights(const ForgedNetwork& n) {
  TensorFile file;
  json sparse = json::object(), layers = json::array();
  const std::int64_t d = n.d_model;
  empty_sparse(file, sparse, "embed.token", {2, d});
  empty_sparse(file, sparse, "embed.position", {n.max_len + 1, d});
  empty_sparse(file, sparse, "unembed", {d, 1});
  for (std::size_t i = 0; i < n.layers.size(); ++i) {
    const ForgedLayer& l = n.layers[i];
    const std::string at = "layers." + std::to_string(i);
    json heads = json::array();
    for (int h = 0; h < l.heads; ++h)
      heads.push_back({{"name", "head " + std::to_string(h)},
                       {"kind", "select"},
                       {"query_dim", l.head_dim},
                       {"value_dim", l.head_dim}});
    if (l.heads > 0) {
      for (const char* part : {".attn.q", ".attn.k", ".attn.v"})
        empty_sparse(file, sparse, at + part, {l.heads, d, l.head_dim});
      empty_sparse(file, sparse, at + ".attn.o", {l.heads, l.head_dim, d});
    }
    if (l.mlp_hidden) {
      empty_sparse(file, sparse, at + ".mlp.in.weight", {*l.mlp_hidden, d});
      empty_sparse(file, sparse, at + ".mlp.in.bias", {*l.mlp_hidden});
      empty_sparse(file, sparse, at + ".mlp.out.weight", {d, *l.mlp_hidden});
      empty_sparse(file, sparse, at + ".mlp.out.bias", {d});
    }
    layers.push_back({{"purpose", "forged"},
                      {"head_dim", l.head_dim},
                      {"heads", heads},
                      {"mlp_hidden", l.mlp_hidden ? json(*l.mlp_hidden) : json(nullptr)},
                      {"mlp_blocks", json::array()}});
  }
  json labels = json::array();
  for (std::int64_t c = 0; c < d; ++c) labels.push_back("dim " + std::to_string(c));
  const json config = {{"d_model", d},         {"n_layers", n.layers.size()},
                       {"max_len", n.max_len}, {"vocabulary", {"<bos>", "x"}},
                       {"states", {"a"}},      {"attention", {{"kind", "softmax"}, {"scale", 1.0}}},
                       {"layers", layers}};
  file.metadata = {{"format", "krc"},         {"version", "1"},
                   {"config", config.dump()}, {"automaton", n.automaton},
                   {"sparse", sparse.dump()}, {"residual_labels", labels.dump()}};
  if (n.compiler) file.metadata["compiler"] = *n.compiler;
  return write_safetensors(file);
}

}  // namespace krc::test
