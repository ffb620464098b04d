#include "weights/weights_metadata.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "krc/automata/automaton_json.hpp"
#include "krc/runtime/weights_file.hpp"

namespace krc::weights {

namespace {

// One head of a layer whose heads are head_dim wide.
HeadConfig parse_head(const JsonReader& r, const json& h, const json::json_pointer& at,
                      int head_dim) {
  HeadConfig hc;
  hc.name = r.string(r.member(h, at, "name"), at / "name");
  hc.role = r.role(h, at);
  try {
    hc.kind = head_kind_from_string(r.string(r.member(h, at, "kind"), at / "kind"));
  } catch (const std::invalid_argument& e) {
    r.fail(at / "kind", e.what());
  }
  // Optional: the head's own widths inside the layer's zero-padded head_dim.
  hc.query_dim = hc.value_dim = head_dim;
  if (h.contains("query_dim"))
    hc.query_dim = static_cast<int>(r.integer(h["query_dim"], at / "query_dim", 0, head_dim));
  if (h.contains("value_dim"))
    hc.value_dim = static_cast<int>(r.integer(h["value_dim"], at / "value_dim", 0, head_dim));
  return hc;
}

LayerConfig parse_layer(const JsonReader& r, const json& l, const json::json_pointer& at) {
  using ptr = json::json_pointer;
  LayerConfig lc;
  lc.purpose = r.string(r.member(l, at, "purpose"), at / "purpose");
  lc.head_dim =
      static_cast<int>(r.integer(r.member(l, at, "head_dim"), at / "head_dim", 0, kMaxDimension));
  const json& heads = r.member(l, at, "heads");
  if (!heads.is_array()) r.fail(at / "heads", "must be a list");
  if (static_cast<long long>(heads.size()) > kMaxDimension) r.fail(at / "heads", "too many heads");
  for (std::size_t h = 0; h < heads.size(); ++h)
    lc.heads.push_back(parse_head(r, heads[h], at / "heads" / h, lc.head_dim));
  const json& hidden = r.member(l, at, "mlp_hidden");
  if (!hidden.is_null())
    lc.mlp_hidden = static_cast<int>(r.integer(hidden, at / "mlp_hidden", 0, kMaxDimension));
  const json& blocks = r.member(l, at, "mlp_blocks");
  if (!blocks.is_array()) r.fail(at / "mlp_blocks", "must be a list");
  int next = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const ptr bat = at / "mlp_blocks" / b;
    MlpBlock block;
    block.name = r.string(r.member(blocks[b], bat, "name"), bat / "name");
    block.role = r.role(blocks[b], bat);
    block.first = static_cast<int>(
        r.integer(r.member(blocks[b], bat, "first"), bat / "first", 0, kMaxDimension));
    block.count = static_cast<int>(
        r.integer(r.member(blocks[b], bat, "count"), bat / "count", 0, kMaxDimension));
    if (block.first != next)
      r.fail(bat / "first",
             "blocks must cover the hidden units in order: expected " + std::to_string(next));
    next += block.count;
    lc.blocks.push_back(block);
  }
  if (!lc.mlp_hidden && !blocks.empty())
    r.fail(at / "mlp_blocks", "names blocks of a layer without MLP");
  // Blocks are optional names; when present they cover [0, mlp_hidden) exactly.
  if (!blocks.empty() && next != lc.mlp_hidden.value_or(0))
    r.fail(at / "mlp_blocks", "cover " + std::to_string(next) + " hidden units, mlp_hidden is " +
                                  std::to_string(lc.mlp_hidden.value_or(0)));
  return lc;
}

}  // namespace

Config parse_config(const MetadataReader& m) {
  const json doc = m.parse("config", m.required_text("config"));
  JsonReader r(m, "config");
  using ptr = json::json_pointer;
  const ptr root;
  Config c;
  c.d_model = static_cast<int>(
      r.integer(r.member(doc, root, "d_model"), root / "d_model", 1, kMaxDimension));
  c.max_len = static_cast<int>(
      r.integer(r.member(doc, root, "max_len"), root / "max_len", 1, kMaxDimension));
  c.vocabulary = r.unique_strings(r.member(doc, root, "vocabulary"), root / "vocabulary");
  // "<bos>" alone: a network over the empty alphabet, which reads only the empty word.
  if (c.vocabulary.empty() || c.vocabulary[0] != kReservedLetter)
    r.fail(root / "vocabulary", "must be \"<bos>\" followed by the letters");
  if (static_cast<long long>(c.vocabulary.size()) > kMaxDimension)
    r.fail(root / "vocabulary", "too many letters");
  c.states = r.unique_strings(r.member(doc, root, "states"), root / "states");
  if (c.states.empty()) r.fail(root / "states", "must name at least one state");
  if (static_cast<long long>(c.states.size()) > kMaxDimension)
    r.fail(root / "states", "too many states");

  const json& attention = r.member(doc, root, "attention");
  const ptr at_attention = root / "attention";
  std::string kind = r.string(r.member(attention, at_attention, "kind"), at_attention / "kind");
  try {
    c.attention = attention_kind_from_string(kind);
  } catch (const std::invalid_argument& e) {
    r.fail(at_attention / "kind", e.what());
  }
  const json& scale = r.member(attention, at_attention, "scale");
  if (!scale.is_number() || !std::isfinite(scale.get<double>()) ||
      std::abs(scale.get<double>()) > std::numeric_limits<float>::max())
    r.fail(at_attention / "scale", "must be a finite number");
  c.scale = static_cast<float>(scale.get<double>());

  const json& layers = r.member(doc, root, "layers");
  if (!layers.is_array()) r.fail(root / "layers", "must be a list");
  long long n_layers =
      r.integer(r.member(doc, root, "n_layers"), root / "n_layers", 0, kMaxDimension);
  if (static_cast<long long>(layers.size()) != n_layers)
    r.fail(root / "layers", "lists " + std::to_string(layers.size()) + " layers, n_layers says " +
                                std::to_string(n_layers));
  for (std::size_t i = 0; i < layers.size(); ++i)
    c.layers.push_back(parse_layer(r, layers[i], root / "layers" / i));
  if (static_cast<long long>(c.max_len + 1) * c.d_model > kMaxDenseElements ||
      static_cast<long long>(c.vocabulary.size()) * c.d_model > kMaxDenseElements)
    r.fail(root, "the embeddings would exceed krc's limit of " + std::to_string(kMaxDenseElements) +
                     " elements");
  return c;
}

namespace {

// The optional "residual_subspaces": named ranges that cover the residual dimensions in order.
std::vector<ResidualSubspace> parse_subspaces(const MetadataReader& m, const std::string& text) {
  const json doc = m.parse("residual_subspaces", text);
  JsonReader r(m, "residual_subspaces");
  using ptr = json::json_pointer;
  if (!doc.is_array()) r.fail(ptr(), "must be a list");
  std::vector<ResidualSubspace> out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const ptr at = ptr() / i;
    ResidualSubspace s;
    s.name = r.string(r.member(doc[i], at, "name"), at / "name");
    s.first =
        static_cast<int>(r.integer(r.member(doc[i], at, "first"), at / "first", 0, kMaxDimension));
    s.width =
        static_cast<int>(r.integer(r.member(doc[i], at, "width"), at / "width", 1, kMaxDimension));
    s.role = r.role(doc[i], at);
    if (s.first != (out.empty() ? 0 : out.back().first + out.back().width))
      r.fail(at / "first", "subspaces must cover the residual dimensions in order");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

NetworkMetadata read_metadata(const std::map<std::string, std::string>& metadata,
                              const std::string& file) {
  MetadataReader m(metadata, file);
  if (m.required_text("format") != "krc")
    m.fail("format", json::json_pointer(), "is \"" + m.required_text("format") + "\", not \"krc\"");
  if (m.required_text("version") != "1")
    m.fail("version", json::json_pointer(),
           "is \"" + m.required_text("version") + "\"; this krc reads version \"1\"");
  NetworkMetadata result;
  result.config = parse_config(m);
  const Config& c = result.config;

  const json labels = m.parse("residual_labels", m.required_text("residual_labels"));
  JsonReader label_reader(m, "residual_labels");
  if (!labels.is_array()) label_reader.fail(json::json_pointer(), "must be a list of strings");
  for (std::size_t i = 0; i < labels.size(); ++i)
    result.residual_labels.push_back(label_reader.string(labels[i], json::json_pointer() / i));
  if (static_cast<long long>(result.residual_labels.size()) != c.d_model)
    label_reader.fail(json::json_pointer(), "has " + std::to_string(result.residual_labels.size()) +
                                                " labels for d_model " + std::to_string(c.d_model));

  if (const auto text = m.text("residual_subspaces")) {
    result.subspaces = parse_subspaces(m, *text);
    if (result.subspaces.empty() ||
        result.subspaces.back().first + result.subspaces.back().width != c.d_model)
      JsonReader(m, "residual_subspaces")
          .fail(json::json_pointer(),
                "must cover the " + std::to_string(c.d_model) + " residual dimensions");
  }

  result.automaton = m.parse("automaton", m.required_text("automaton"));
  Automaton automaton;
  try {
    automaton = automaton_from_json(result.automaton, file);
  } catch (const InputError& e) {
    throw InputError(file, m.place("automaton", json::json_pointer()) + " at " + e.place(),
                     e.problem());
  }
  if (automaton.states() != c.states)
    m.fail("automaton", json::json_pointer("/states"), "differ from the config's states");
  if (automaton.letters() != std::vector<std::string>(c.vocabulary.begin() + 1, c.vocabulary.end()))
    m.fail("automaton", json::json_pointer("/alphabet"), "differs from the config's vocabulary");
  result.compiler = m.text("compiler") ? m.parse("compiler", *m.text("compiler")) : json(nullptr);
  result.sparse = json::object();
  if (auto text = m.text("sparse")) {
    result.sparse = m.parse("sparse", *text);
    if (!result.sparse.is_object())
      m.fail("sparse", json::json_pointer(), "must map tensor names to dense shapes");
  }
  return result;
}

// Width of a layer's attention tensors: the widest query/key or value of its heads.
int layer_head_dim(const Layer& layer) {
  int hd = 0;
  for (const auto& h : layer.heads)
    hd = std::max({hd, static_cast<int>(h.query.cols()), static_cast<int>(h.value.cols())});
  return hd;
}

namespace {

// Roles are recorded where the compiler knew them (README: "Roles").
json with_role(json object, const Role& role) {
  if (role.kind != RoleKind::Unspecified) object["role"] = role_to_json(role);
  return object;
}

}  // namespace

json subspaces_of(const Network& n) {
  json out = json::array();
  for (const auto& s : n.subspaces)
    out.push_back(with_role({{"name", s.name}, {"first", s.first}, {"width", s.width}}, s.role));
  return out;
}

json config_of(const Network& n) {
  json layers = json::array();
  for (const auto& layer : n.layers) {
    json heads = json::array();
    for (const auto& h : layer.heads)
      heads.push_back(with_role({{"name", h.name},
                                 {"kind", to_string(h.kind)},
                                 {"query_dim", h.query.cols()},
                                 {"value_dim", h.value.cols()}},
                                h.role));
    json blocks = json::array();
    if (layer.mlp)
      for (const auto& b : layer.mlp->blocks)
        blocks.push_back(
            with_role({{"name", b.name}, {"first", b.first}, {"count", b.count}}, b.role));
    layers.push_back({{"purpose", layer.purpose},
                      {"head_dim", layer_head_dim(layer)},
                      {"heads", heads},
                      {"mlp_hidden", layer.mlp ? json(layer.mlp->hidden()) : json(nullptr)},
                      {"mlp_blocks", blocks}});
  }
  return {{"d_model", n.d_model()},
          {"n_layers", n.layers.size()},
          {"max_len", n.max_len},
          {"vocabulary", n.vocabulary},
          {"states", n.states},
          {"attention", {{"kind", to_string(n.attention)}, {"scale", n.attention_scale}}},
          {"layers", layers}};
}

}  // namespace krc::weights
