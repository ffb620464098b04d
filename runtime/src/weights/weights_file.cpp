// krc's weights file: the network as safetensors tensors (weights_tensors.cpp) and metadata
// (weights_metadata.cpp). Loading checks the memory budget from the header alone, before a
// tensor is converted: the tensors, the Network built from them and the forward pass's prepared
// copies together, since a 2 KB file can declare heads 2^24 wide. Writing runs the loader's own
// checks on what it is about to write, so that krc never writes a file it would refuse.
#include "krc/runtime/weights_file.hpp"

#include <algorithm>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/runtime/network_memory.hpp"
#include "weights/weights_metadata.hpp"
#include "weights/weights_tensors.hpp"

namespace krc {

using nlohmann::json;
using namespace weights;

namespace {

using Shapes = std::map<std::string, std::vector<std::int64_t>>;  // stored tensor -> shape

struct LoadShape {
  NetworkShape network;
  // While one tensor is converted: the entries of its layer's tensors with their triplets
  // (nonzeros, with room for growth), and a dense-stored tensor's float copy.
  std::uint64_t converting = 0;
};

// The network the config describes, with each tensor's nonzeros bounded by what is stored:
// a sparse tensor's value count, a dense tensor's size.
LoadShape shape_from_config(const Config& c, const Shapes& stored, const json& sparse) {
  std::uint64_t group = 0, largest_group = 0, largest_dense = 0;
  auto nonzeros = [&](const std::string& name, std::uint64_t dense) -> std::uint64_t {
    std::uint64_t count = dense;
    if (sparse.contains(name)) {
      auto values = stored.find(name + ".values");
      count = values == stored.end() || values->second.size() != 1
                  ? 0
                  : static_cast<std::uint64_t>(values->second[0]);
    } else {
      largest_dense = std::max(largest_dense, dense);
    }
    group = saturating_add(group, count);
    return count;
  };
  auto end_group = [&] {
    largest_group = std::max(largest_group, group);
    group = 0;
  };
  const auto d = static_cast<std::uint64_t>(c.d_model);
  LoadShape load;
  NetworkShape& s = load.network;
  s.d_model = c.d_model;
  s.max_len = c.max_len;
  s.vocabulary = static_cast<std::int64_t>(c.vocabulary.size());
  s.states = static_cast<std::int64_t>(c.states.size());
  nonzeros("embed.token", saturating_mul(d, c.vocabulary.size()));
  nonzeros("embed.position", saturating_mul(d, static_cast<std::uint64_t>(c.max_len) + 1));
  end_group();
  s.unembed_nonzeros = nonzeros("unembed", saturating_mul(d, c.states.size()));
  end_group();
  for (std::size_t i = 0; i < c.layers.size(); ++i) {
    const LayerConfig& lc = c.layers[i];
    const std::string at = "layers." + std::to_string(i);
    LayerSize l;
    const std::uint64_t head_tensor =
        saturating_mul(saturating_mul(lc.heads.size(), d), static_cast<std::uint64_t>(lc.head_dim));
    for (const auto& h : lc.heads) l.heads.push_back({h.query_dim, h.value_dim});
    if (!lc.heads.empty())
      for (const char* part : {".attn.q", ".attn.k", ".attn.v", ".attn.o"})
        l.head_nonzeros = saturating_add(l.head_nonzeros, nonzeros(at + part, head_tensor));
    end_group();
    if (lc.mlp_hidden) {
      const std::uint64_t matrix = saturating_mul(d, static_cast<std::uint64_t>(*lc.mlp_hidden));
      l.mlp_hidden = *lc.mlp_hidden;
      l.mlp_in_nonzeros = nonzeros(at + ".mlp.in.weight", matrix);
      l.mlp_out_nonzeros = nonzeros(at + ".mlp.out.weight", matrix);
      nonzeros(at + ".mlp.in.bias", static_cast<std::uint64_t>(*lc.mlp_hidden));
      nonzeros(at + ".mlp.out.bias", d);
    }
    end_group();
    s.layers.push_back(std::move(l));
  }
  // Entries (8 + 4 bytes) and triplets (12) per nonzero, each with room to grow, and the
  // dense copy of a dense-stored tensor (4 per element).
  load.converting =
      saturating_add(saturating_mul(largest_group, 48), saturating_mul(largest_dense, 4));
  return load;
}

// What loading and then running holds at its peak, the larger of two phases: reading (the
// file's tensors and metadata documents, the Network, one layer's tensors while they are
// converted), then preparing (the Network and the forward pass's copies). Every reader frees
// the file's tensors when the Network is made (load_network: a temporary), before a forward
// pass is prepared; counted together, a 1,000-state model in bf16 needed 14.6 GiB to be
// written where neither phase needs 11.8.
std::uint64_t load_bytes(const LoadShape& load, std::uint64_t data_bytes,
                         std::uint64_t metadata_bytes) {
  const std::uint64_t network = network_bytes(load.network);
  std::uint64_t reading = saturating_add(data_bytes, saturating_mul(metadata_bytes, 16));
  reading = saturating_add(saturating_add(reading, network), load.converting);
  return std::max(reading, saturating_add(network, prepared_bytes(load.network)));
}

std::uint64_t text_bytes(const std::map<std::string, std::string>& metadata) {
  std::uint64_t bytes = 0;
  for (const auto& [key, value] : metadata) bytes += key.size() + value.size();
  return bytes;
}

void check_load_memory(const NetworkMetadata& m, const Shapes& stored, std::uint64_t data_bytes,
                       std::uint64_t metadata_bytes, const std::string& file) {
  check_memory(
      "loading " + file + " (its tensors, the network and the forward pass's copies)",
      load_bytes(shape_from_config(m.config, stored, m.sparse), data_bytes, metadata_bytes));
}

Shapes shapes_of(const TensorFile& file, std::uint64_t& data_bytes) {
  Shapes shapes;
  data_bytes = 0;
  for (const auto& [name, t] : file.tensors) {
    shapes[name] = t.shape;
    data_bytes += t.data.size();
  }
  return shapes;
}

// Writing runs the loader's checks on the metadata, its memory estimate on the whole file,
// and refuses a network the loader would refuse.
void check_readable(const TensorFile& file) {
  NetworkMetadata m;
  try {
    m = read_metadata(file.metadata, "the network");
  } catch (const InputError& e) {
    throw LimitError("krc would not read this network back (" + e.place() + ": " + e.problem() +
                     "), so it is not written");
  }
  std::uint64_t data_bytes = 0;
  const Shapes shapes = shapes_of(file, data_bytes);
  try {
    check_load_memory(m, shapes, data_bytes, text_bytes(file.metadata), "this network back");
  } catch (const LimitError& e) {
    throw LimitError(std::string(e.what()) + ", so it is not written");
  }
}

// The heads of layer `at`, from its stacked q, k, v and o tensors.
std::vector<AttentionHead> read_heads(TensorReader& t, const LayerConfig& lc, std::int64_t d,
                                      const std::string& at, const std::string& file) {
  const std::int64_t heads = static_cast<std::int64_t>(lc.heads.size()), hd = lc.head_dim;
  const Entries q = t.take(at + ".attn.q", {heads, d, hd}),
                k = t.take(at + ".attn.k", {heads, d, hd}),
                v = t.take(at + ".attn.v", {heads, d, hd}),
                o = t.take(at + ".attn.o", {heads, hd, d});
  std::vector<AttentionHead> out;
  for (std::int64_t h = 0; h < heads; ++h) {
    const HeadConfig& hc = lc.heads[h];
    AttentionHead head;
    head.name = hc.name;
    head.role = hc.role;
    head.kind = hc.kind;
    head.query = head_matrix(q, h, d, hc.query_dim, at + ".attn.q", file);
    head.key = head_matrix(k, h, d, hc.query_dim, at + ".attn.k", file);
    head.value = head_matrix(v, h, d, hc.value_dim, at + ".attn.v", file);
    head.output = head_matrix(o, h, hc.value_dim, d, at + ".attn.o", file);
    out.push_back(std::move(head));
  }
  return out;
}

Mlp read_mlp(TensorReader& t, const LayerConfig& lc, std::int64_t d, const std::string& at,
             const std::string& file) {
  const std::int64_t hidden = *lc.mlp_hidden;
  Mlp mlp;
  mlp.in_weight =
      to_sparse(t.take(at + ".mlp.in.weight", {hidden, d}), at + ".mlp.in.weight", file);
  mlp.in_bias = to_vector(t.take(at + ".mlp.in.bias", {hidden}));
  mlp.out_weight =
      to_sparse(t.take(at + ".mlp.out.weight", {d, hidden}), at + ".mlp.out.weight", file);
  mlp.out_bias = to_vector(t.take(at + ".mlp.out.bias", {d}));
  mlp.blocks = lc.blocks;
  return mlp;
}

}  // namespace

TensorFile network_to_tensor_file(const Network& n, const WriteOptions& options) {
  n.check_shapes();
  const std::int64_t d = n.d_model();
  TensorFile file;
  json sparse = json::object();
  // The stored forms cost their bytes twice at the peak (the tensors, then the file's string),
  // beside the network itself; dense forms are only built once that is known to fit.
  const std::uint64_t resident = network_bytes(shape_of(n));
  std::uint64_t stored = 0;
  auto put = [&](const std::string& name, const Entries& e) {
    if (auto problem = tensor_size_problem(e.shape))
      throw LimitError("tensor '" + name + "': " + *problem + ", so the network is not written");
    const bool as_sparse = stored_sparse(e, options);
    const std::uint64_t tensor = stored_bytes(e, as_sparse);
    stored = saturating_add(stored, tensor);
    const std::string what =
        "writing the network (" + byte_size_text(stored) + " of tensors so far)";
    check_memory(what, saturating_add(resident, saturating_mul(stored, 2)));
    // What else the process holds (the compiler's program, its plans) counts too.
    check_resident_growth(what, tensor);
    store(file, sparse, name, e, as_sparse);
  };

  put("embed.token", dense_entries(n.token_embedding, {n.token_embedding.rows(), d}));
  put("embed.position", dense_entries(n.position_embedding, {n.position_embedding.rows(), d}));
  put("unembed", sparse_entries(n.unembedding));
  for (std::size_t i = 0; i < n.layers.size(); ++i) {
    const Layer& layer = n.layers[i];
    const std::string at = "layers." + std::to_string(i);
    if (!layer.heads.empty()) {
      const std::int64_t heads = static_cast<std::int64_t>(layer.heads.size());
      const std::int64_t hd = layer_head_dim(layer);
      Entries q{{heads, d, hd}, {}, {}}, k = q, v = q, o{{heads, hd, d}, {}, {}};
      for (std::int64_t h = 0; h < heads; ++h) {
        add_matrix(q, layer.heads[h].query, h, d, hd);
        add_matrix(k, layer.heads[h].key, h, d, hd);
        add_matrix(v, layer.heads[h].value, h, d, hd);
        add_matrix(o, layer.heads[h].output, h, hd, d);
      }
      put(at + ".attn.q", q);
      put(at + ".attn.k", k);
      put(at + ".attn.v", v);
      put(at + ".attn.o", o);
    }
    if (layer.mlp) {
      put(at + ".mlp.in.weight", sparse_entries(layer.mlp->in_weight));
      put(at + ".mlp.in.bias", vector_entries(layer.mlp->in_bias));
      put(at + ".mlp.out.weight", sparse_entries(layer.mlp->out_weight));
      put(at + ".mlp.out.bias", vector_entries(layer.mlp->out_bias));
    }
  }
  file.metadata["format"] = "krc";
  file.metadata["version"] = "1";
  file.metadata["config"] = config_of(n).dump();
  file.metadata["automaton"] = n.automaton.dump();
  file.metadata["residual_labels"] = json(n.residual_labels).dump();
  if (!n.subspaces.empty()) file.metadata["residual_subspaces"] = subspaces_of(n).dump();
  file.metadata["compiler"] = n.compiler.dump();
  file.metadata["sparse"] = sparse.dump();
  check_readable(file);
  return file;
}

std::string network_to_safetensors(const Network& network, const WriteOptions& options) {
  const TensorFile file = network_to_tensor_file(network, options);
  // The file's string is made beside the tensors: it must fit beside what is resident.
  std::uint64_t bytes = 0;
  for (const auto& [name, t] : file.tensors) bytes = saturating_add(bytes, t.data.size());
  check_resident_growth("writing the network (its file of " + byte_size_text(bytes) + ")", bytes);
  return write_safetensors(file);
}

Network network_from_safetensors(const TensorFile& tensors, const std::string& file) {
  const NetworkMetadata meta = read_metadata(tensors.metadata, file);
  const Config& c = meta.config;
  std::uint64_t data_bytes = 0;
  const Shapes shapes = shapes_of(tensors, data_bytes);
  check_load_memory(meta, shapes, data_bytes, text_bytes(tensors.metadata), file);

  Network n;
  n.max_len = c.max_len;
  n.vocabulary = c.vocabulary;
  n.states = c.states;
  n.attention = c.attention;
  n.attention_scale = c.scale;
  n.residual_labels = meta.residual_labels;
  n.subspaces = meta.subspaces;
  n.automaton = meta.automaton;
  n.compiler = meta.compiler;

  const MetadataReader m(tensors.metadata, file);
  TensorReader t(tensors, meta.sparse, m);
  const std::int64_t d = c.d_model;
  const std::int64_t vocabulary = static_cast<std::int64_t>(c.vocabulary.size());
  n.token_embedding = to_dense(t.take("embed.token", {vocabulary, d}));
  n.position_embedding = to_dense(t.take("embed.position", {c.max_len + 1, d}));
  n.unembedding = to_sparse(t.take("unembed", {d, static_cast<std::int64_t>(c.states.size())}),
                            "unembed", file);
  for (std::size_t i = 0; i < c.layers.size(); ++i) {
    const LayerConfig& lc = c.layers[i];
    const std::string at = "layers." + std::to_string(i);
    Layer layer;
    layer.purpose = lc.purpose;
    if (!lc.heads.empty()) layer.heads = read_heads(t, lc, d, at, file);
    if (lc.mlp_hidden) layer.mlp = read_mlp(t, lc, d, at, file);
    n.layers.push_back(std::move(layer));
  }
  t.check_all_taken();
  return n;
}

Network load_network(const std::string& path) {
  // The budget is checked from the header, before the tensors are read.
  auto check = [&](const SafetensorsHeader& header) {
    Shapes shapes;
    for (const auto& [name, entry] : header.tensors) shapes[name] = entry.shape;
    check_load_memory(read_metadata(header.metadata, path), shapes, header.data_bytes,
                      header.header_bytes, path);
  };
  return network_from_safetensors(read_safetensors(path, check), path);
}

}  // namespace krc
