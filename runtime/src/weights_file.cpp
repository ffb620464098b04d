#include "krc/weights_file.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>

#include "krc/automaton_json.hpp"
#include "krc/input_error.hpp"

namespace krc {

using nlohmann::json;

namespace {

// The nonzero entries of a tensor, in row-major (flat index) order.
struct Entries {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> flat;
  std::vector<float> values;

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  void add(std::int64_t index, float value) {
    // Bit patterns, not values: -0.0 is kept so that a round trip is bit-exact.
    if (std::bit_cast<std::uint32_t>(value) == 0) return;
    flat.push_back(index);
    values.push_back(value);
  }
};

// A sparse tensor's dense size is not bounded by the file; keep flat indices far from overflow.
constexpr std::int64_t kMaxElements = 1LL << 40;

std::string tensor_place(const std::string& name) { return "tensor '" + name + "'"; }

std::string shape_text(const std::vector<std::int64_t>& shape) { return json(shape).dump(); }

// ---------------------------------------------------------------- writing

// Places matrix m at block `block` of a [blocks, rows, cols] tensor (zero padded).
void add_matrix(Entries& e, const SparseMatrix& m, std::int64_t block, std::int64_t rows,
                std::int64_t cols) {
  std::vector<std::pair<std::int64_t, float>> items;
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      items.emplace_back((block * rows + it.row()) * cols + it.col(), it.value());
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [index, value] : items) e.add(index, value);
}

Entries sparse_entries(const SparseMatrix& m) {
  Entries e{{m.rows(), m.cols()}, {}, {}};
  add_matrix(e, m, 0, m.rows(), m.cols());
  return e;
}

template <typename Dense>
Entries dense_entries(const Dense& m, std::vector<std::int64_t> shape) {
  Entries e{std::move(shape), {}, {}};
  const Eigen::Index cols = m.cols();
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < cols; ++c) e.add(r * cols + c, m(r, c));
  return e;
}

Entries vector_entries(const Eigen::VectorXf& v) {
  Entries e{{v.size()}, {}, {}};
  for (Eigen::Index i = 0; i < v.size(); ++i) e.add(i, v[i]);
  return e;
}

void store(TensorFile& file, json& sparse, const std::string& name, const Entries& e,
           const WriteOptions& options) {
  const std::int64_t numel = e.numel(), nnz = static_cast<std::int64_t>(e.flat.size());
  const std::int64_t rank = static_cast<std::int64_t>(e.shape.size());
  bool as_sparse = options.storage == WriteOptions::Storage::Sparse ||
                   (options.storage == WriteOptions::Storage::Auto && numel > 4096 &&
                    nnz * (4 + 4 * rank) < 4 * numel);
  for (auto d : e.shape)
    if (d > std::numeric_limits<std::int32_t>::max()) as_sparse = false;  // I32 indices
  if (!as_sparse) {
    std::vector<float> dense(static_cast<std::size_t>(numel), 0.0f);
    for (std::size_t i = 0; i < e.flat.size(); ++i) dense[e.flat[i]] = e.values[i];
    file.tensors[name] = make_f32_tensor(e.shape, dense);
    return;
  }
  std::vector<std::int32_t> indices(static_cast<std::size_t>(nnz * rank));
  for (std::int64_t k = 0; k < nnz; ++k) {
    std::int64_t rest = e.flat[k];
    for (std::int64_t axis = rank - 1; axis >= 0; --axis) {
      indices[k * rank + axis] = static_cast<std::int32_t>(rest % e.shape[axis]);
      rest /= e.shape[axis];
    }
  }
  file.tensors[name + ".indices"] = make_i32_tensor({nnz, rank}, indices);
  file.tensors[name + ".values"] = make_f32_tensor({nnz}, e.values);
  sparse[name] = e.shape;
}

// Width of a layer's attention tensors: the widest query/key or value of its heads.
int layer_head_dim(const Layer& layer) {
  int hd = 0;
  for (const auto& h : layer.heads)
    hd = std::max({hd, static_cast<int>(h.query.cols()), static_cast<int>(h.value.cols())});
  return hd;
}

// Roles are recorded where the compiler knew them (README: "Roles").
json with_role(json object, const Role& role) {
  if (role.kind != RoleKind::Unspecified) object["role"] = role_to_json(role);
  return object;
}

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

// ---------------------------------------------------------------- reading

// Reads one JSON metadata value, failing with the key and JSON pointer of the problem.
class MetadataReader {
 public:
  MetadataReader(const TensorFile& tensors, std::string file)
      : metadata_(tensors.metadata), file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  std::optional<std::string> text(const std::string& key) const {
    auto it = metadata_.find(key);
    if (it == metadata_.end()) return std::nullopt;
    return it->second;
  }
  const std::string& required_text(const std::string& key) const {
    auto it = metadata_.find(key);
    if (it == metadata_.end()) throw InputError(file_, "__metadata__", "missing \"" + key + "\"");
    return it->second;
  }
  json parse(const std::string& key, const std::string& text) const {
    try {
      return json::parse(text);
    } catch (const json::parse_error& e) {
      throw InputError(file_, place(key, json::json_pointer()),
                       std::string("not valid JSON: ") + e.what());
    }
  }
  std::string place(const std::string& key, const json::json_pointer& at) const {
    std::string p = "__metadata__ \"" + key + "\"";
    return at.empty() ? p : p + " at " + at.to_string();
  }
  [[noreturn]] void fail(const std::string& key, const json::json_pointer& at,
                         const std::string& problem) const {
    throw InputError(file_, place(key, at), problem);
  }

 private:
  const std::map<std::string, std::string>& metadata_;
  std::string file_;
};

// Typed access to a JSON document from the metadata; every failure names the pointer.
class JsonReader {
 public:
  JsonReader(const MetadataReader& m, std::string key) : m_(m), key_(std::move(key)) {}

  [[noreturn]] void fail(const json::json_pointer& at, const std::string& problem) const {
    m_.fail(key_, at, problem);
  }
  const json& member(const json& object, const json::json_pointer& at, const char* name) const {
    if (!object.is_object()) fail(at, std::string("must be an object, not ") + object.type_name());
    auto it = object.find(name);
    if (it == object.end()) fail(at, std::string("missing \"") + name + "\"");
    return *it;
  }
  long long integer(const json& v, const json::json_pointer& at, long long min,
                    long long max) const {
    if (!v.is_number_integer()) fail(at, std::string("must be an integer, not ") + v.type_name());
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
      fail(at, v.dump() + " is larger than " + std::to_string(max));
    long long x = v.get<long long>();
    if (x < min || x > max)
      fail(at, v.dump() + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return x;
  }
  std::string string(const json& v, const json::json_pointer& at) const {
    if (!v.is_string()) fail(at, std::string("must be a string, not ") + v.type_name());
    return v.get<std::string>();
  }
  // The optional "role" member of an object.
  Role role(const json& object, const json::json_pointer& at) const {
    const auto it = object.find("role");
    if (it == object.end()) return {};
    try {
      return role_from_json(*it);
    } catch (const std::invalid_argument& e) {
      fail(at / "role", e.what());
    }
  }
  std::vector<std::string> unique_strings(const json& v, const json::json_pointer& at) const {
    if (!v.is_array()) fail(at, std::string("must be a list of strings, not ") + v.type_name());
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
      out.push_back(string(v[i], at / i));
      if (!seen.insert(out.back()).second) fail(at / i, "\"" + out.back() + "\" appears twice");
    }
    return out;
  }

 private:
  const MetadataReader& m_;
  std::string key_;
};

struct HeadConfig {
  std::string name;
  Role role;
  HeadKind kind;
  int query_dim, value_dim;
};

struct LayerConfig {
  std::string purpose;
  int head_dim;
  std::vector<HeadConfig> heads;
  std::optional<int> mlp_hidden;
  std::vector<MlpBlock> blocks;
};

struct Config {
  int d_model, max_len;
  std::vector<std::string> vocabulary, states;
  AttentionKind attention;
  float scale;
  std::vector<LayerConfig> layers;
};

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
  if (c.vocabulary.size() < 2 || c.vocabulary[0] != "<bos>")
    r.fail(root / "vocabulary", "must be \"<bos>\" followed by at least one letter");
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
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const ptr at = root / "layers" / i;
    const json& l = layers[i];
    LayerConfig lc;
    lc.purpose = r.string(r.member(l, at, "purpose"), at / "purpose");
    lc.head_dim =
        static_cast<int>(r.integer(r.member(l, at, "head_dim"), at / "head_dim", 0, kMaxDimension));
    const json& heads = r.member(l, at, "heads");
    if (!heads.is_array()) r.fail(at / "heads", "must be a list");
    if (static_cast<long long>(heads.size()) > kMaxDimension)
      r.fail(at / "heads", "too many heads");
    for (std::size_t h = 0; h < heads.size(); ++h) {
      const ptr hat = at / "heads" / h;
      HeadConfig hc;
      hc.name = r.string(r.member(heads[h], hat, "name"), hat / "name");
      hc.role = r.role(heads[h], hat);
      try {
        hc.kind = head_kind_from_string(r.string(r.member(heads[h], hat, "kind"), hat / "kind"));
      } catch (const std::invalid_argument& e) {
        r.fail(hat / "kind", e.what());
      }
      // Optional: the head's own widths inside the layer's zero-padded head_dim.
      hc.query_dim = hc.value_dim = lc.head_dim;
      if (heads[h].contains("query_dim"))
        hc.query_dim =
            static_cast<int>(r.integer(heads[h]["query_dim"], hat / "query_dim", 0, lc.head_dim));
      if (heads[h].contains("value_dim"))
        hc.value_dim =
            static_cast<int>(r.integer(heads[h]["value_dim"], hat / "value_dim", 0, lc.head_dim));
      lc.heads.push_back(hc);
    }
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
    // Blocks are optional names; when present they cover [0, mlp_hidden) exactly.
    if (!blocks.empty() && next != lc.mlp_hidden.value_or(0))
      r.fail(at / "mlp_blocks", "cover " + std::to_string(next) + " hidden units, mlp_hidden is " +
                                    std::to_string(lc.mlp_hidden.value_or(0)));
    c.layers.push_back(std::move(lc));
  }
  if (static_cast<long long>(c.max_len + 1) * c.d_model > kMaxDenseElements ||
      static_cast<long long>(c.vocabulary.size()) * c.d_model > kMaxDenseElements)
    r.fail(root, "the embeddings would exceed krc's limit of " + std::to_string(kMaxDenseElements) +
                     " elements");
  return c;
}

// Takes tensors out of the file by name, dense or sparse, checking dtype, shape and values,
// and remembers what was taken so that leftovers can be reported.
class TensorReader {
 public:
  TensorReader(const TensorFile& tensors, const MetadataReader& m) : tensors_(tensors), m_(m) {
    if (auto text = m.text("sparse")) {
      sparse_ = m.parse("sparse", *text);
      if (!sparse_.is_object())
        m.fail("sparse", json::json_pointer(), "must map tensor names to dense shapes");
    } else {
      sparse_ = json::object();
    }
  }

  Entries take(const std::string& name, const std::vector<std::int64_t>& shape) {
    std::int64_t numel = 1;
    for (auto dim : shape)
      if (__builtin_mul_overflow(numel, dim, &numel) || numel > kMaxElements)
        fail(name, "shape " + shape_text(shape) + " exceeds krc's limit of " +
                       std::to_string(kMaxElements) + " elements");
    Entries e = sparse_.contains(name) ? take_sparse(name, shape) : take_dense(name, shape);
    for (float v : e.values)
      if (!std::isfinite(v))
        fail(name, "holds a value that is not finite (" + std::to_string(v) + ")");
    return e;
  }

  // Everything in the file must belong to the network the config describes.
  void check_all_taken() const {
    for (const auto& [name, t] : tensors_.tensors)
      if (!taken_.count(name)) fail(name, "is not part of the network the config describes");
    for (const auto& [name, shape] : sparse_.items())
      if (!taken_sparse_.count(name))
        m_.fail("sparse", json::json_pointer() / name, "names a tensor the network does not have");
  }

 private:
  [[noreturn]] void fail(const std::string& name, const std::string& problem) const {
    throw InputError(m_.file(), tensor_place(name), problem);
  }

  const Tensor& find(const std::string& name, DType dtype) {
    auto it = tensors_.tensors.find(name);
    if (it == tensors_.tensors.end()) fail(name, "is missing");
    if (it->second.dtype != dtype)
      fail(name,
           std::string("must be ") + to_string(dtype) + ", not " + to_string(it->second.dtype));
    taken_.insert(name);
    return it->second;
  }

  Entries take_dense(const std::string& name, const std::vector<std::int64_t>& shape) {
    const Tensor& t = find(name, DType::F32);
    if (t.shape != shape)
      fail(name, "has shape " + shape_text(t.shape) + ", the config says " + shape_text(shape));
    Entries e{shape, {}, {}};
    const auto values = f32_values(t);
    for (std::size_t i = 0; i < values.size(); ++i) e.add(static_cast<std::int64_t>(i), values[i]);
    return e;
  }

  Entries take_sparse(const std::string& name, const std::vector<std::int64_t>& shape) {
    taken_sparse_.insert(name);
    if (tensors_.tensors.count(name)) fail(name, "is stored both dense and sparse");
    const json& declared = sparse_[name];
    if (declared != json(shape))
      m_.fail(
          "sparse", json::json_pointer() / name,
          "dense shape " + declared.dump() + " disagrees with the config's " + shape_text(shape));
    const Tensor& indices = find(name + ".indices", DType::I32);
    const Tensor& values = find(name + ".values", DType::F32);
    const std::int64_t rank = static_cast<std::int64_t>(shape.size());
    if (values.shape.size() != 1) fail(name + ".values", "must be a vector [nnz]");
    const std::int64_t nnz = values.shape[0];
    if (indices.shape != std::vector<std::int64_t>{nnz, rank})
      fail(name + ".indices", "has shape " + shape_text(indices.shape) + ", expected " +
                                  shape_text({nnz, rank}) + " (nnz, rank)");
    const auto index = i32_values(indices);
    const auto value = f32_values(values);
    Entries e{shape, {}, {}};
    std::int64_t previous = -1;
    for (std::int64_t k = 0; k < nnz; ++k) {
      std::int64_t flat = 0;
      for (std::int64_t axis = 0; axis < rank; ++axis) {
        const std::int32_t i = index[k * rank + axis];
        if (i < 0 || i >= shape[axis])
          fail(name + ".indices", "entry " + std::to_string(k) + " has index " + std::to_string(i) +
                                      " on axis " + std::to_string(axis) + ", outside [0, " +
                                      std::to_string(shape[axis]) + ")");
        flat = flat * shape[axis] + i;  // < numel, which the dimension limits keep in range
      }
      if (flat <= previous)
        fail(name + ".indices",
             "entry " + std::to_string(k) +
                 " is not after the previous one (indices must be sorted and distinct)");
      previous = flat;
      e.flat.push_back(flat);
      e.values.push_back(value[k]);
    }
    return e;
  }

  const TensorFile& tensors_;
  const MetadataReader& m_;
  json sparse_;
  std::set<std::string> taken_, taken_sparse_;
};

// Entries [begin, begin + rows*cols) of `e` as a rows x cols block, cut to keep_rows x
// keep_cols (a head inside its layer's zero-padded width); a nonzero in the cut-off padding
// is an error, since dropping it would change what the file means.
SparseMatrix block_matrix(const Entries& e, std::int64_t begin, std::int64_t rows,
                          std::int64_t cols, std::int64_t keep_rows, std::int64_t keep_cols,
                          const std::string& name, const std::string& file) {
  const std::int64_t end = begin + rows * cols;
  std::vector<Eigen::Triplet<float, int>> triplets;
  auto first = std::lower_bound(e.flat.begin(), e.flat.end(), begin);
  for (auto it = first; it != e.flat.end() && *it < end; ++it) {
    const std::int64_t r = (*it - begin) / cols, c = (*it - begin) % cols;
    if (r >= keep_rows || c >= keep_cols)
      throw InputError(file, tensor_place(name),
                       "has a nonzero at [" + std::to_string(r) + ", " + std::to_string(c) +
                           "] of a head, outside the head's declared width");
    triplets.emplace_back(static_cast<int>(r), static_cast<int>(c), e.values[it - e.flat.begin()]);
  }
  SparseMatrix m(static_cast<int>(keep_rows), static_cast<int>(keep_cols));
  m.setFromTriplets(triplets.begin(), triplets.end());
  return m;
}

// Head h of a [heads, rows, cols] tensor.
SparseMatrix head_matrix(const Entries& e, std::int64_t h, std::int64_t keep_rows,
                         std::int64_t keep_cols, const std::string& name, const std::string& file) {
  const std::int64_t rows = e.shape[1], cols = e.shape[2];
  return block_matrix(e, h * rows * cols, rows, cols, keep_rows, keep_cols, name, file);
}

SparseMatrix to_sparse(const Entries& e, const std::string& name, const std::string& file) {
  return block_matrix(e, 0, e.shape[0], e.shape[1], e.shape[0], e.shape[1], name, file);
}

RowMatrix to_dense(const Entries& e) {
  RowMatrix m = RowMatrix::Zero(e.shape[0], e.shape[1]);
  for (std::size_t i = 0; i < e.flat.size(); ++i) m.data()[e.flat[i]] = e.values[i];
  return m;
}

Eigen::VectorXf to_vector(const Entries& e) {
  Eigen::VectorXf v = Eigen::VectorXf::Zero(e.shape[0]);
  for (std::size_t i = 0; i < e.flat.size(); ++i) v[e.flat[i]] = e.values[i];
  return v;
}

}  // namespace

TensorFile network_to_tensor_file(const Network& n, const WriteOptions& options) {
  n.check_shapes();
  const std::int64_t d = n.d_model();
  TensorFile file;
  json sparse = json::object();
  auto put = [&](const std::string& name, const Entries& e) {
    store(file, sparse, name, e, options);
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
  return file;
}

std::string network_to_safetensors(const Network& network, const WriteOptions& options) {
  return write_safetensors(network_to_tensor_file(network, options));
}

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

Network network_from_safetensors(const TensorFile& tensors, const std::string& file) {
  MetadataReader m(tensors, file);
  if (m.required_text("format") != "krc")
    m.fail("format", json::json_pointer(), "is \"" + m.required_text("format") + "\", not \"krc\"");
  if (m.required_text("version") != "1")
    m.fail("version", json::json_pointer(),
           "is \"" + m.required_text("version") + "\"; this krc reads version \"1\"");
  const Config c = parse_config(m);

  Network n;
  n.max_len = c.max_len;
  n.vocabulary = c.vocabulary;
  n.states = c.states;
  n.attention = c.attention;
  n.attention_scale = c.scale;

  const json labels = m.parse("residual_labels", m.required_text("residual_labels"));
  JsonReader label_reader(m, "residual_labels");
  if (!labels.is_array()) label_reader.fail(json::json_pointer(), "must be a list of strings");
  for (std::size_t i = 0; i < labels.size(); ++i)
    n.residual_labels.push_back(label_reader.string(labels[i], json::json_pointer() / i));
  if (static_cast<long long>(n.residual_labels.size()) != c.d_model)
    label_reader.fail(json::json_pointer(), "has " + std::to_string(n.residual_labels.size()) +
                                                " labels for d_model " + std::to_string(c.d_model));

  if (const auto text = m.text("residual_subspaces")) {
    n.subspaces = parse_subspaces(m, *text);
    if (n.subspaces.empty() || n.subspaces.back().first + n.subspaces.back().width != c.d_model)
      JsonReader(m, "residual_subspaces")
          .fail(json::json_pointer(),
                "must cover the " + std::to_string(c.d_model) + " residual dimensions");
  }

  n.automaton = m.parse("automaton", m.required_text("automaton"));
  Automaton automaton;
  try {
    automaton = automaton_from_json(n.automaton, file);
  } catch (const InputError& e) {
    throw InputError(file, m.place("automaton", json::json_pointer()) + " at " + e.place(),
                     e.problem());
  }
  if (automaton.states() != n.states)
    m.fail("automaton", json::json_pointer("/states"), "differ from the config's states");
  if (automaton.letters() != std::vector<std::string>(n.vocabulary.begin() + 1, n.vocabulary.end()))
    m.fail("automaton", json::json_pointer("/alphabet"), "differs from the config's vocabulary");
  n.compiler = m.text("compiler") ? m.parse("compiler", *m.text("compiler")) : json(nullptr);

  TensorReader t(tensors, m);
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
    if (!lc.heads.empty()) {
      const std::int64_t heads = static_cast<std::int64_t>(lc.heads.size()), hd = lc.head_dim;
      const Entries q = t.take(at + ".attn.q", {heads, d, hd}),
                    k = t.take(at + ".attn.k", {heads, d, hd}),
                    v = t.take(at + ".attn.v", {heads, d, hd}),
                    o = t.take(at + ".attn.o", {heads, hd, d});
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
        layer.heads.push_back(std::move(head));
      }
    }
    if (lc.mlp_hidden) {
      const std::int64_t hidden = *lc.mlp_hidden;
      Mlp mlp;
      mlp.in_weight =
          to_sparse(t.take(at + ".mlp.in.weight", {hidden, d}), at + ".mlp.in.weight", file);
      mlp.in_bias = to_vector(t.take(at + ".mlp.in.bias", {hidden}));
      mlp.out_weight =
          to_sparse(t.take(at + ".mlp.out.weight", {d, hidden}), at + ".mlp.out.weight", file);
      mlp.out_bias = to_vector(t.take(at + ".mlp.out.bias", {d}));
      mlp.blocks = lc.blocks;
      layer.mlp = std::move(mlp);
    } else if (!lc.blocks.empty()) {
      JsonReader(m, "config")
          .fail(json::json_pointer("/layers") / i / "mlp_blocks",
                "names blocks of a layer without MLP");
    }
    n.layers.push_back(std::move(layer));
  }
  t.check_all_taken();
  return n;
}

Network load_network(const std::string& path) {
  return network_from_safetensors(read_safetensors(path), path);
}

}  // namespace krc
