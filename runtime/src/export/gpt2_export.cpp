// The GPT-2 export (krc/runtime/gpt2_export.hpp): a stock GPT2LMHeadModel checkpoint of a krc
// network.
//
// GPT-2 normalises before every sublayer and at the end. The export makes each LayerNorm the
// identity bit for bit in PyTorch's float32 CPU kernel (compiler/README.md §7): n_embd is a
// power of two N >= 512; krc's d residual coordinates and a constant 1 sit in the first half,
// their exact negation in the second half, so the kernel's Welford mean is exactly 0; epsilon is
// 4^30 and gamma 2^30, so a computed variance up to 2^36 vanishes against epsilon and the
// scaling is exact for every value of magnitude at least 2^-96 and every multiple of 2^-119
// (gpt2_exactness proves that the values read are such, or the export is refused). Weights read
// the first half; every write (the embeddings, attention's c_proj, the MLP's c_proj and bias)
// writes +w to the first half and -w to the second, which keeps the negation exact because
// rounding commutes with it.
#include "krc/runtime/gpt2_export.hpp"

#include <bit>
#include <cmath>
#include <optional>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/runtime/circuit.hpp"
#include "krc/runtime/role.hpp"
#include "krc/runtime/safetensors.hpp"

namespace krc {

namespace {

using nlohmann::json;
// LayerNorm(x) = (x - mean) / sqrt(var + eps) * gamma + beta with eps = 4^k, gamma = 2^k: exact
// when var <= 2^(2k - 24) (every |x| <= 2^(k - 12)) for the values with |x| >= 2^(k - 126). k is
// Gpt2Shape's norm_exponent, the one gpt2_exactness proved (30 unless the residual is large).
// A letter's or <bos>'s logit is the first state's minus this: letters never win.
constexpr float kLetterPenalty = 1024.0f;
// Below 512 a mirrored half fits in one Welford chunk of 16 AVX-512 vectors (see README).
constexpr long long kMinWidth = 512;

Gpt2Shape gpt2_shape(const Network& n) {
  Gpt2Shape s;
  s.d = n.d_model();
  s.letters = static_cast<long long>(n.vocabulary.size()) - 1;
  s.states = static_cast<long long>(n.states.size());
  long long heads = 1, width = 1;
  for (const Layer& layer : n.layers) {
    heads = std::max<long long>(heads, static_cast<long long>(layer.heads.size()));
    for (const auto& h : layer.heads)
      width = std::max<long long>({width, h.query.cols(), h.key.cols(), h.value.cols()});
    if (layer.mlp) s.inner = std::max<long long>(s.inner, layer.mlp->hidden());
  }
  s.n_head = static_cast<long long>(std::bit_ceil(static_cast<unsigned long long>(heads)));
  s.n_embd = std::max<long long>(
      kMinWidth,
      static_cast<long long>(std::bit_ceil(static_cast<unsigned long long>(2 * s.d + 2))));
  while (s.n_embd / s.n_head < width) s.n_embd *= 2;
  // head_dim a power of 4, so that the 1/sqrt(head_dim) GPT-2 applies is a power of two that
  // the query weights undo exactly (TransformerLens 4.3 ignores scale_attn_weights: false).
  if (std::countr_zero(static_cast<unsigned long long>(s.n_embd / s.n_head)) % 2 == 1) {
    if (s.n_embd / s.n_head / 2 >= width)
      s.n_head *= 2;
    else
      s.n_embd *= 2;
  }
  s.half = s.n_embd / 2;
  s.head_dim = s.n_embd / s.n_head;
  return s;
}

long long tensor_bytes(const Network& n, const Gpt2Shape& s) {
  const long long E = s.n_embd, m = s.inner;
  const long long block = 4 * E + 3 * E * E + 3 * E + E * E + E + E * m + m + m * E + E;
  return 4 * (2 * s.vocab() * E + (n.max_len + 1LL) * E + 2 * E +
              static_cast<long long>(n.layers.size()) * block);
}

// A dense row-major [rows, cols] float32 tensor being filled.
struct Dense {
  long long rows, cols;
  bool vector;  // a bias: shape [cols]
  std::vector<float> v;
  Dense(long long r, long long c, bool is_vector = false)
      : rows(r), cols(c), vector(is_vector), v(static_cast<std::size_t>(r * c), 0.0f) {}
  float& at(long long r, long long c) { return v[static_cast<std::size_t>(r * cols + c)]; }
  // A write into the residual stream: +x to coordinate c, -x to its mirror.
  void mirrored(long long r, long long c, float x, long long half) {
    at(r, c) = x;
    at(r, half + c) = -x;
  }
  Tensor tensor() const {
    return vector ? make_f32_tensor({cols}, v) : make_f32_tensor({rows, cols}, v);
  }
};

Tensor filled(long long n, float x) { return make_f32_tensor({n}, std::vector<float>(n, x)); }

// Calls f(row, col, value) for every stored entry of m.
template <typename F>
void each(const SparseMatrix& m, F f) {
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it) f(it.row(), it.col(), it.value());
}

void add_embeddings(TensorFile& file, const Network& n, const Gpt2Shape& s) {
  Dense wte(s.vocab(), s.n_embd), wpe(n.max_len + 1LL, s.n_embd), head(s.vocab(), s.n_embd);
  for (long long t = 0; t <= s.letters; ++t) {
    for (long long c = 0; c < s.d; ++c) wte.mirrored(t, c, n.token_embedding(t, c), s.half);
    wte.mirrored(t, s.d, 1.0f, s.half);  // the constant coordinate
  }
  for (long long t = 0; t <= n.max_len; ++t)
    for (long long c = 0; c < s.d; ++c) wpe.mirrored(t, c, n.position_embedding(t, c), s.half);
  // lm_head reads the first half: a state's row is its unembedding column; <bos> and the
  // letters copy the first state's row less kLetterPenalty on the constant, so they lose.
  each(n.unembedding, [&](long long c, long long state, float x) {
    head.at(1 + s.letters + state, c) = x;
    if (state == 0)
      for (long long t = 0; t <= s.letters; ++t) head.at(t, c) = x;
  });
  for (long long t = 0; t <= s.letters; ++t) head.at(t, s.d) = -kLetterPenalty;
  file.tensors["transformer.wte.weight"] = wte.tensor();
  file.tensors["transformer.wpe.weight"] = wpe.tensor();
  file.tensors["lm_head.weight"] = head.tensor();
  file.tensors["transformer.ln_f.weight"] = filled(s.n_embd, std::ldexp(1.0f, s.norm_exponent));
  file.tensors["transformer.ln_f.bias"] = filled(s.n_embd, 0.0f);
}

// c_attn holds [q | k | v], head h in columns h * head_dim ...; GPT-2's score is
// (q . k) / sqrt(head_dim), so krc's scale and sqrt(head_dim), both powers of two, go into q
// exactly (scaling by a power of two commutes with rounding).
void add_attention(TensorFile& file, const Layer& layer, const std::string& p, float scale,
                   const Gpt2Shape& s) {
  scale *= std::ldexp(1.0f, std::countr_zero(static_cast<unsigned long long>(s.head_dim)) / 2);
  Dense qkv(s.n_embd, 3 * s.n_embd), proj(s.n_embd, s.n_embd);
  for (std::size_t h = 0; h < layer.heads.size(); ++h) {
    const auto& head = layer.heads[h];
    const long long base = static_cast<long long>(h) * s.head_dim;
    each(head.query, [&](long long r, long long j, float x) { qkv.at(r, base + j) = scale * x; });
    each(head.key, [&](long long r, long long j, float x) { qkv.at(r, s.n_embd + base + j) = x; });
    each(head.value,
         [&](long long r, long long j, float x) { qkv.at(r, 2 * s.n_embd + base + j) = x; });
    each(head.output,
         [&](long long j, long long c, float x) { proj.mirrored(base + j, c, x, s.half); });
  }
  file.tensors[p + "attn.c_attn.weight"] = qkv.tensor();
  file.tensors[p + "attn.c_attn.bias"] = filled(3 * s.n_embd, 0.0f);
  file.tensors[p + "attn.c_proj.weight"] = proj.tensor();
  file.tensors[p + "attn.c_proj.bias"] = filled(s.n_embd, 0.0f);
}

void add_mlp(TensorFile& file, const Layer& layer, const std::string& p, const Gpt2Shape& s) {
  Dense in(s.n_embd, s.inner), in_bias(1, s.inner, true), out(s.inner, s.n_embd),
      out_bias(1, s.n_embd, true);
  if (layer.mlp) {
    const Mlp& mlp = *layer.mlp;
    each(mlp.in_weight, [&](long long u, long long r, float x) { in.at(r, u) = x; });
    each(mlp.out_weight, [&](long long c, long long u, float x) { out.mirrored(u, c, x, s.half); });
    for (long long u = 0; u < mlp.hidden(); ++u) in_bias.at(0, u) = mlp.in_bias[u];
    for (long long c = 0; c < s.d; ++c) out_bias.mirrored(0, c, mlp.out_bias[c], s.half);
  }
  file.tensors[p + "mlp.c_fc.weight"] = in.tensor();
  file.tensors[p + "mlp.c_fc.bias"] = in_bias.tensor();
  file.tensors[p + "mlp.c_proj.weight"] = out.tensor();
  file.tensors[p + "mlp.c_proj.bias"] = out_bias.tensor();
}

TensorFile checkpoint(const Network& n, const Gpt2Shape& s) {
  TensorFile file;
  add_embeddings(file, n, s);
  const float gamma = std::ldexp(1.0f, s.norm_exponent);
  for (std::size_t i = 0; i < n.layers.size(); ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    for (const char* norm : {"ln_1.", "ln_2."}) {
      file.tensors[p + norm + "weight"] = filled(s.n_embd, gamma);
      file.tensors[p + norm + "bias"] = filled(s.n_embd, 0.0f);
    }
    add_attention(file, n.layers[i], p, n.attention_scale, s);
    add_mlp(file, n.layers[i], p, s);
  }
  file.metadata["format"] = "pt";
  return file;
}

json gpt2_config(const Network& n, const Gpt2Shape& s) {
  return {{"architectures", {"GPT2LMHeadModel"}},
          {"model_type", "gpt2"},
          {"vocab_size", s.vocab()},
          {"n_positions", n.max_len + 1},
          {"n_embd", s.n_embd},
          {"n_layer", n.layers.size()},
          {"n_head", s.n_head},
          {"n_inner", s.inner},
          {"activation_function", "relu"},
          {"resid_pdrop", 0.0},
          {"embd_pdrop", 0.0},
          {"attn_pdrop", 0.0},
          {"layer_norm_epsilon", std::ldexp(1.0, 2 * s.norm_exponent)},
          {"initializer_range", 0.02},
          {"scale_attn_weights", true},
          {"scale_attn_by_inverse_layer_idx", false},
          {"reorder_and_upcast_attn", false},
          {"tie_word_embeddings", false},
          {"bos_token_id", 0},
          {"eos_token_id", 0},
          {"dtype", "float32"}};
}

json vocabulary(const Network& n, const Gpt2Shape& s) {
  json letters = json::object(), states = json::object();
  for (long long t = 1; t <= s.letters; ++t) letters[n.vocabulary[t]] = t;
  for (long long q = 0; q < s.states; ++q) states[n.states[q]] = 1 + s.letters + q;
  return {{"bos", 0}, {"letters", letters}, {"states", states}};
}

// What GPT-2's config has no field for: the residual labels in the exported layout, the
// heads' and MLP blocks' roles, the automaton, and the layout's constants.
json side_file(const Network& n, const Gpt2Shape& s) {
  std::vector<std::string> labels(s.n_embd, "padding (zero)");
  for (long long c = 0; c < s.d; ++c) labels[c] = n.residual_labels[c];
  labels[s.d] = "constant 1";
  for (long long c = 0; c <= s.d; ++c) labels[s.half + c] = "mirror: " + labels[c];
  json layers = json::array();
  for (const Layer& layer : n.layers) {
    json heads = json::array(), blocks = json::array();
    for (const auto& h : layer.heads)
      heads.push_back(
          {{"name", h.name}, {"kind", to_string(h.kind)}, {"role", role_to_json(h.role)}});
    if (layer.mlp)
      for (const auto& b : layer.mlp->blocks)
        blocks.push_back({{"name", b.name},
                          {"first", b.first},
                          {"count", b.count},
                          {"role", role_to_json(b.role)}});
    layers.push_back({{"purpose", layer.purpose},
                      {"heads", heads},
                      {"mlp_hidden", layer.mlp ? json(layer.mlp->hidden()) : json(nullptr)},
                      {"mlp_blocks", blocks}});
  }
  json subspaces = json::array();
  for (const auto& sub : n.subspaces)
    subspaces.push_back({{"name", sub.name},
                         {"first", sub.first},
                         {"width", sub.width},
                         {"role", role_to_json(sub.role)}});
  return {{"format", "krc-gpt2"},
          {"version", "1"},
          {"layout",
           {{"d_model", s.d},
            {"constant", s.d},
            {"mirror_offset", s.half},
            {"layer_norm_epsilon_log4", s.norm_exponent},
            {"letter_penalty", kLetterPenalty}}},
          {"residual_labels", labels},
          {"residual_subspaces", subspaces},
          {"layers", layers},
          {"max_len", n.max_len},
          {"automaton", n.automaton},
          {"compiler", n.compiler}};
}

void check_exportable(const Network& n, const std::string& file) {
  if (n.attention != AttentionKind::Softmax)
    throw InputError(file, "config",
                     std::string("compiled for ") + to_string(n.attention) +
                         " attention; GPT-2 runs softmax (compile with "
                         "--attention softmax)");
  int exponent = 0;
  if (!(n.attention_scale > 0) || std::frexp(n.attention_scale, &exponent) != 0.5f)
    throw InputError(file, "config",
                     "attention scale " + std::to_string(n.attention_scale) +
                         " is not a power of two; GPT-2 has no scale to hold it "
                         "exactly");
}

// The longest max-len the network is certified for in `format` ("fp32", "bf16", "fp16"), from
// its compiler metadata; none when it says nothing or null.
std::optional<long long> certified_length(const Network& n, const std::string& format) {
  try {
    const json& exact_in = n.compiler.at("precision").at("exact_in");
    if (!exact_in.contains(format) || !exact_in.at(format).is_number_integer()) return {};
    return exact_in.at(format).get<long long>();
  } catch (const json::exception&) {
    return {};  // a file compiled before the precision metadata, or one that fills it oddly
  }
}

std::vector<Gpt2Format> kept_formats(const Network& n, const Gpt2Exactness& e,
                                     const std::string& fp16_why) {
  std::vector<Gpt2Format> formats;
  const std::string max_len = std::to_string(n.max_len);
  auto format = [&](const char* name, const char* krc_name) {
    Gpt2Format f{name, false, false, ""};
    const std::optional<long long> longest = certified_length(n, krc_name);
    f.certified = longest ? *longest >= n.max_len : std::string(krc_name) == "fp32";
    if (!e.exact)
      f.why = "the LayerNorms are not proved the identity (" + e.reason + ")";
    else if (std::string(krc_name) != "fp32" && !longest)
      f.why = std::string("the network is not certified in ") + krc_name +
              " (compile with --precision " + krc_name + ")";
    else if (longest && *longest < n.max_len)
      f.why = std::string("the network is certified in ") + krc_name + " up to max-len " +
              std::to_string(*longest) + ", below its " + max_len;
    else if (std::string(krc_name) == "fp16" && e.norm_exponent > kLargestFp16NormExponent)
      f.why = fp16_why.empty() ? "gamma 2^" + std::to_string(e.norm_exponent) +
                                     " is past fp16's largest number, 65,504"
                               : fp16_why;
    f.kept = f.why.empty();
    formats.push_back(f);
  };
  format("float32", "fp32");
  format("bfloat16", "bf16");
  format("float16", "fp16");
  return formats;
}

json exactness_json(const Gpt2Exactness& e) {
  return {{"exact", e.exact}, {"reason", e.reason}, {"largest", e.largest}};
}

// What to try when the proof fails on a head's leak: networks compiled without `--norm
// layernorm` whose strategy has position fetches it sharpens (scan: all of them; kr: those from
// t - 1, the memory heads stay).
std::string suggestion(const Network& n, const std::string& reason) {
  const bool leak = reason.find("softmax weights may fall below") != std::string::npos;
  if (!leak || !n.compiler.is_object() || n.compiler.contains("norm")) return "";
  const std::string strategy = n.compiler.value("strategy", "");
  if (strategy != "scan" && strategy != "kr") return "";
  return std::string("; recompiling with `krc compile --norm layernorm` makes the position ") +
         "fetches leak nothing (" +
         (strategy == "scan" ? "scan networks then export exactly"
                             : "it may help kr, whose memory heads it leaves as they are") +
         ": compiler/README.md, \"When it is exact\")";
}

// The circuit file (circuit.hpp) of the network, with where each node lives in the
// checkpoint, by nnsight's module paths (GPT2LMHeadModel's) and the TransformerLens 4 bridge's
// hook names (MIB's: a head's q, k, v inputs and its per-head output): krc's layer L is GPT-2's
// block L, head H its head H (columns H * head_dim of c_proj's input), and a residual dimension
// c < d_model the same dimension there (writes are mirrored at mirror_offset + c, reads see c).
json gpt2_circuit(const Network& n, const Gpt2Shape& s) {
  json circuit = circuit_json(n, CircuitGranularity::Head);
  json where = json::object();
  where["input"] = {{"nnsight", {"transformer.wte", "transformer.wpe"}},
                    {"transformer_lens", {"hook_embed", "hook_pos_embed"}}};
  for (std::size_t i = 0; i < n.layers.size(); ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    const std::string b = "blocks." + std::to_string(i) + ".";
    for (std::size_t h = 0; h < n.layers[i].heads.size(); ++h) {
      const long long first = static_cast<long long>(h) * s.head_dim;
      where["a" + std::to_string(i) + ".h" + std::to_string(h)] = {
          {"nnsight",
           {{"output", p + "attn.c_proj"},
            {"output_of", "input"},
            {"columns", {first, first + s.head_dim}}}},
          {"transformer_lens",
           {{"output", b + "attn.hook_z"},
            {"head", h},
            {"q", b + "hook_q_input"},
            {"k", b + "hook_k_input"},
            {"v", b + "hook_v_input"}}}};
    }
    if (n.layers[i].mlp)
      where["m" + std::to_string(i)] = {
          {"nnsight", {{"output", p + "mlp"}, {"output_of", "output"}}},
          {"transformer_lens", {{"output", b + "hook_mlp_out"}, {"input", b + "hook_mlp_in"}}}};
  }
  where["logits"] = {{"nnsight", {{"output", "lm_head"}, {"output_of", "output"}}},
                     {"transformer_lens", {{"input", "ln_final.hook_in"}}},
                     {"first_state_token", 1 + s.letters}};
  circuit["gpt2"] = {{"nodes", where}, {"head_dim", s.head_dim}, {"mirror_offset", s.half}};
  return circuit;
}

}  // namespace

Gpt2Checkpoint gpt2_checkpoint(const Network& n, const std::string& source,
                               const Gpt2Options& options) {
  check_exportable(n, source);
  Gpt2Checkpoint c;
  c.shape = gpt2_shape(n);
  c.tensor_bytes = tensor_bytes(n, c.shape);
  if (c.tensor_bytes > options.max_bytes)
    throw LimitError("export: the GPT-2 checkpoint would hold " + with_thousands(c.tensor_bytes) +
                     " bytes of tensors, more than --max-bytes " +
                     with_thousands(options.max_bytes) +
                     "; raise --max-bytes (the export is built in memory, about twice its size)");
  // Built in memory, the tensors and then the files' strings: both beside the network loaded.
  check_resident_growth(
      "exporting the GPT-2 checkpoint (" + with_thousands(c.tensor_bytes) + " bytes of tensors)",
      saturating_mul(static_cast<std::uint64_t>(c.tensor_bytes), 2));
  const std::optional<long long> fp16 = certified_length(n, "fp16");
  std::string fp16_why;
  if (fp16 && *fp16 >= n.max_len) {
    // fp16's gamma first; the float32 search only where it cannot prove the identity.
    c.exactness =
        gpt2_exactness(n, c.shape.n_embd, kLargestFp16NormExponent, kLargestFp16NormExponent);
    if (!c.exactness.exact) {
      fp16_why =
          "with epsilon 4^15 and gamma 2^15 (fp16 holds no larger power of two) the "
          "LayerNorms are not proved the identity: " +
          c.exactness.reason;
      c.exactness = gpt2_exactness(n, c.shape.n_embd);
    }
  } else {
    c.exactness = gpt2_exactness(n, c.shape.n_embd);
  }
  c.shape.norm_exponent = c.exactness.norm_exponent;
  c.formats = kept_formats(n, c.exactness, fp16_why);
  if (!c.exactness.exact && !options.allow_inexact)
    throw InputError(source, "gpt2 export",
                     "not provably exact: " + c.exactness.reason +
                         suggestion(n, c.exactness.reason) +
                         "; --allow-inexact (Python: allow_inexact=True) exports it anyway");
  c.config = gpt2_config(n, c.shape);
  json side = side_file(n, c.shape);
  side["exactness"] = exactness_json(c.exactness);
  side["formats"] = gpt2_formats_json(c.formats);
  c.files.emplace_back("model.safetensors", write_safetensors(checkpoint(n, c.shape)));
  c.tensor_bytes = static_cast<long long>(c.files.back().second.size());
  c.files.emplace_back("krc_vocab.json", vocabulary(n, c.shape).dump(1) + "\n");
  c.files.emplace_back("krc_gpt2.json",
                       side.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  c.files.emplace_back("krc_circuit.json", gpt2_circuit(n, c.shape).dump(1) + "\n");
  c.files.emplace_back("config.json", c.config.dump(1) + "\n");
  return c;
}

json gpt2_formats_json(const std::vector<Gpt2Format>& formats) {
  json out = json::object();
  for (const Gpt2Format& f : formats)
    out[f.name] = {{"kept", f.kept}, {"network_certified", f.certified}, {"why", f.why}};
  return out;
}

}  // namespace krc
