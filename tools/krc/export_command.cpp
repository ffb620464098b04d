// `krc export FILE -o OUT [--max-bytes N] [--json]`: rewrites a krc weights file as a dense
// safetensors file in TransformerLens's layout (README "Exporting"), for tools that want plain
// tensors: every layer has the same number of heads, head width and MLP width, zero padded, and
// the metadata holds a HookedTransformerConfig-style config, the automaton and the labels.
//
// Legend: d = d_model, V = vocabulary (<bos> first), S = states, H = n_heads, e = d_head,
// m = d_mlp, L = max_len. Why zero padding is exact: a zero head has zero values, so whatever
// its softmax it writes exact zeros; a zero hidden unit is ReLU(0) = 0 times a zero column.
#include <chrono>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "command.hpp"
#include "export_gpt2.hpp"
#include "export_onnx.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/runtime/weights_file.hpp"
#include "output_file.hpp"

namespace krc::cli {

namespace {

using nlohmann::json;

struct ExportArguments {
  std::string input, output, format = "transformer-lens";
  long long max_bytes = 2LL << 30;
  bool json = false;
  bool allow_inexact = false;
};

// A dense row-major float32 tensor being filled.
struct DenseTensor {
  std::vector<std::int64_t> shape;
  std::vector<float> values;

  explicit DenseTensor(std::vector<std::int64_t> s) : shape(std::move(s)) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    values.assign(static_cast<std::size_t>(n), 0.0f);
  }
  // Copies m, or its transpose, into block `block` of a [blocks, rows, cols] tensor (a matrix
  // is one block); entries beyond m's size stay zero.
  void put(const SparseMatrix& m, std::int64_t block = 0, bool transpose = false) {
    const std::int64_t rows = shape[shape.size() - 2], cols = shape.back();
    if ((transpose ? m.cols() : m.rows()) > rows || (transpose ? m.rows() : m.cols()) > cols)
      throw std::logic_error("export: a matrix wider than its padded tensor");
    for (int r = 0; r < m.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(m, r); it; ++it) {
        const std::int64_t i = transpose ? it.col() : it.row(), j = transpose ? it.row() : it.col();
        values[static_cast<std::size_t>((block * rows + i) * cols + j)] = it.value();
      }
  }
  Tensor tensor() const { return make_f32_tensor(shape, values); }
};

// The uniform shape every block gets: the largest of each size, at least one head of width 1
// (TransformerLens needs a head per layer); m = 0 when no layer has an MLP (attn_only).
struct UniformShape {
  long long d = 0, H = 1, e = 1, m = 0;
};

UniformShape uniform_shape(const Network& n) {
  UniformShape u;
  u.d = n.d_model();
  for (const Layer& layer : n.layers) {
    u.H = std::max<long long>(u.H, static_cast<long long>(layer.heads.size()));
    // A layer's head width is its widest query, key or value (narrower ones are zero padded).
    for (const auto& head : layer.heads)
      u.e = std::max<long long>({u.e, head.query.cols(), head.key.cols(), head.value.cols()});
    if (layer.mlp) u.m = std::max<long long>(u.m, layer.mlp->hidden());
  }
  return u;
}

// What a HookedTransformerConfig needs to run the exported tensors as krc does. krc's score is
// scale * (q . k); TransformerLens divides q . k by attn_scale when use_attn_scale is set.
json transformer_lens_config(const Network& n, const UniformShape& u) {
  json c = {{"n_layers", n.layers.size()},
            {"d_model", u.d},
            {"n_ctx", n.max_len + 1},
            {"d_head", u.e},
            {"n_heads", u.H},
            {"d_mlp", u.m > 0 ? json(u.m) : json(nullptr)},
            {"attn_only", u.m == 0},
            {"d_vocab", n.vocabulary.size()},
            {"d_vocab_out", n.states.size()},
            {"act_fn", "relu"},
            {"normalization_type", nullptr},
            {"positional_embedding_type", "standard"},
            {"attention_dir", "causal"},
            {"use_attn_scale", n.attention_scale != 1.0f},
            {"attn_scale", 1.0 / static_cast<double>(n.attention_scale)},
            {"default_prepend_bos", false}};
  return c;
}

// What TransformerLens has no field for: the vocabulary and states, the kind of every head
// (padding heads are "average": a softmax over zero scores) and the real sizes.
json krc_info(const Network& n, const UniformShape& u) {
  json heads = json::array(), hidden = json::array();
  for (const Layer& layer : n.layers) {
    json row = json::array();
    for (const auto& head : layer.heads)
      row.push_back({{"name", head.name}, {"kind", to_string(head.kind)}});
    while (static_cast<long long>(row.size()) < u.H)
      row.push_back({{"name", "padding (zero)"}, {"kind", "average"}});
    heads.push_back(row);
    hidden.push_back(layer.mlp ? json(layer.mlp->hidden()) : json(nullptr));
  }
  return {{"vocabulary", n.vocabulary}, {"states", n.states},
          {"max_len", n.max_len},       {"attention", to_string(n.attention)},
          {"scale", n.attention_scale}, {"heads", heads},
          {"mlp_hidden", hidden}};
}

void add_block(TensorFile& file, const Layer& layer, int i, const UniformShape& u) {
  const std::string p = "blocks." + std::to_string(i) + ".";
  DenseTensor W_Q({u.H, u.d, u.e}), W_K({u.H, u.d, u.e}), W_V({u.H, u.d, u.e}),
      W_O({u.H, u.e, u.d});
  for (std::size_t h = 0; h < layer.heads.size(); ++h) {
    const auto& head = layer.heads[h];
    const auto b = static_cast<std::int64_t>(h);
    W_Q.put(head.query, b);
    W_K.put(head.key, b);
    W_V.put(head.value, b);
    W_O.put(head.output, b);
  }
  file.tensors[p + "attn.W_Q"] = W_Q.tensor();
  file.tensors[p + "attn.W_K"] = W_K.tensor();
  file.tensors[p + "attn.W_V"] = W_V.tensor();
  file.tensors[p + "attn.W_O"] = W_O.tensor();
  for (const char* bias : {"attn.b_Q", "attn.b_K", "attn.b_V"})
    file.tensors[p + bias] = DenseTensor({u.H, u.e}).tensor();
  file.tensors[p + "attn.b_O"] = DenseTensor({u.d}).tensor();
  if (u.m == 0) return;
  DenseTensor W_in({u.d, u.m}), b_in({u.m}), W_out({u.m, u.d}), b_out({u.d});
  if (layer.mlp) {
    W_in.put(layer.mlp->in_weight, 0, true);    // [m, d] -> [d, m]
    W_out.put(layer.mlp->out_weight, 0, true);  // [d, m] -> [m, d]
    std::copy(layer.mlp->in_bias.begin(), layer.mlp->in_bias.end(), b_in.values.begin());
    std::copy(layer.mlp->out_bias.begin(), layer.mlp->out_bias.end(), b_out.values.begin());
  }
  file.tensors[p + "mlp.W_in"] = W_in.tensor();
  file.tensors[p + "mlp.b_in"] = b_in.tensor();
  file.tensors[p + "mlp.W_out"] = W_out.tensor();
  file.tensors[p + "mlp.b_out"] = b_out.tensor();
}

// The bytes of the dense tensors, known before anything is allocated.
long long dense_bytes(const Network& n, const UniformShape& u) {
  const long long V = static_cast<long long>(n.vocabulary.size());
  const long long S = static_cast<long long>(n.states.size());
  const long long per_block =
      4 * u.H * u.d * u.e + 3 * u.H * u.e + u.d + (u.m > 0 ? 2 * u.d * u.m + u.m + u.d : 0);
  return 4 * ((V + n.max_len + 1) * u.d + static_cast<long long>(n.layers.size()) * per_block +
              u.d * S + S);
}

TensorFile export_file(const Network& n, const UniformShape& u) {
  TensorFile file;
  DenseTensor W_E({static_cast<std::int64_t>(n.vocabulary.size()), u.d});
  std::copy(n.token_embedding.data(), n.token_embedding.data() + n.token_embedding.size(),
            W_E.values.begin());
  DenseTensor W_pos({n.max_len + 1LL, u.d});
  std::copy(n.position_embedding.data(), n.position_embedding.data() + n.position_embedding.size(),
            W_pos.values.begin());
  DenseTensor W_U({u.d, static_cast<std::int64_t>(n.states.size())});
  W_U.put(n.unembedding);
  file.tensors["embed.W_E"] = W_E.tensor();
  file.tensors["pos_embed.W_pos"] = W_pos.tensor();
  file.tensors["unembed.W_U"] = W_U.tensor();
  file.tensors["unembed.b_U"] = DenseTensor({static_cast<std::int64_t>(n.states.size())}).tensor();
  for (std::size_t i = 0; i < n.layers.size(); ++i)
    add_block(file, n.layers[i], static_cast<int>(i), u);
  file.metadata["format"] = "krc-transformer-lens";
  file.metadata["version"] = "1";
  file.metadata["config"] = transformer_lens_config(n, u).dump();
  file.metadata["krc"] = krc_info(n, u).dump();
  file.metadata["automaton"] = n.automaton.dump();
  // What the network is certified for (its precision's exact_in), for the loaders' warnings.
  file.metadata["compiler"] = n.compiler.dump();
  file.metadata["residual_labels"] = json(n.residual_labels).dump();
  return file;
}

int run_export(const ExportArguments& a) {
  const auto start = std::chrono::steady_clock::now();
  front_door::refuse_output_over_inputs(a.output, {a.input});
  const Network network = load_network(a.input);
  const UniformShape u = uniform_shape(network);
  const long long bytes = dense_bytes(network, u);
  if (bytes > a.max_bytes)
    throw LimitError("export: the dense file would hold " + with_thousands(bytes) +
                     " bytes of tensors, more than --max-bytes " + with_thousands(a.max_bytes) +
                     "; raise --max-bytes (the export is built in memory, about twice its size)");
  // Built in memory, the tensors and then the file's string: both beside the network loaded.
  check_resident_growth(
      "exporting the dense TransformerLens file (" + with_thousands(bytes) + " bytes of tensors)",
      saturating_mul(static_cast<std::uint64_t>(bytes), 2));
  const std::string contents = write_safetensors(export_file(network, u));
  front_door::write_output(a.output, contents, {.inputs = {a.input}});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const json config = transformer_lens_config(network, u);
  if (a.json) {
    std::cout << json{{"input", a.input},
                      {"output", a.output},
                      {"bytes", contents.size()},
                      {"config", config},
                      {"seconds", seconds}}
                     .dump(1, ' ', false, json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  std::cout << "TransformerLens layout: " << network.layers.size() << " blocks, d_model " << u.d
            << ", n_heads " << u.H << ", d_head " << u.e << ", "
            << (u.m > 0 ? "d_mlp " + std::to_string(u.m) : std::string("attention only"))
            << ", n_ctx " << network.max_len + 1 << " (zero padded to uniform blocks)\n";
  std::cout << "wrote " << a.output << " ("
            << with_thousands(static_cast<long long>(contents.size())) << " bytes, dense) in "
            << std::fixed;
  std::cout.precision(2);
  std::cout << seconds << " s\n";
  return 0;
}

const RegisterCommand export_registration{{
    "export",
    "Write a weights file as dense safetensors in TransformerLens's layout, as a GPT-2 "
    "checkpoint, or as an ONNX model",
    45,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ExportArguments>();
      sub.footer(
          "Tensors: embed.W_E, pos_embed.W_pos, blocks.{i}.attn.W_Q/W_K/W_V [n_heads, d_model,\n"
          "d_head], W_O [n_heads, d_head, d_model], b_Q/b_K/b_V/b_O, blocks.{i}.mlp.W_in\n"
          "[d_model, d_mlp], b_in, W_out [d_mlp, d_model], b_out, unembed.W_U, unembed.b_U.\n"
          "Metadata: config (HookedTransformerConfig arguments), krc (vocabulary, states, head\n"
          "kinds), automaton, residual_labels. See README \"Exporting\".");
      sub.add_option("FILE", a->input, "krc weights file (.safetensors, sparse or dense)")
          ->required();
      sub.add_option("-o,--output", a->output,
                     "File to write (safetensors; - for stdout), with --format onnx the ONNX "
                     "model, or with --format gpt2 the checkpoint directory")
          ->required();
      sub.add_option("--format", a->format,
                     "transformer-lens: one safetensors file in TransformerLens's layout; gpt2: a "
                     "Hugging Face GPT2LMHeadModel checkpoint directory whose LayerNorms are exact "
                     "identities (README \"Exporting\"); onnx: an ONNX model (opset 17, float32) "
                     "written by the Python package's export (krc.Network.to_onnx: the same "
                     "bytes), which needs the venv's onnx and torch (krc[onnx])")
          ->check(CLI::IsMember({"transformer-lens", "gpt2", "onnx"}))
          ->capture_default_str();
      sub.add_option("--max-bytes", a->max_bytes,
                     "Refuse to write more tensor bytes than this (dense files of long max-len "
                     "networks are large)")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
      sub.add_flag("--json", a->json, "Print the summary and the config as JSON");
      sub.add_flag("--allow-inexact", a->allow_inexact,
                   "gpt2: export a network whose LayerNorms krc cannot prove exact (refused by "
                   "default, exit 2); the warning says why and bounds the error");
      return [a] {
        if (a->allow_inexact && a->format != "gpt2")
          throw InputError("command line", "--allow-inexact", "only --format gpt2 takes it");
        if (a->format == "gpt2")
          return run_export_gpt2({a->input, a->output, a->max_bytes, a->json, a->allow_inexact});
        if (a->format == "onnx")
          return run_export_onnx({a->input, a->output, a->max_bytes, a->json});
        return run_export(*a);
      };
    },
}};

}  // namespace

}  // namespace krc::cli
