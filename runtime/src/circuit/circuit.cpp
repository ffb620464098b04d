// The circuit file and its ablation check (circuit.hpp; runtime/README.md, "The circuit file").
#include "krc/runtime/circuit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/runtime/attention_weights.hpp"

namespace krc {

const char* to_string(CircuitGranularity granularity) {
  return granularity == CircuitGranularity::Head ? "head" : "subspace";
}

CircuitGranularity circuit_granularity_from_string(const std::string& s) {
  if (s == "head") return CircuitGranularity::Head;
  if (s == "subspace") return CircuitGranularity::Subspace;
  throw std::invalid_argument("unknown circuit granularity '" + s + "' (head or subspace)");
}

const char* to_string(CircuitAblation ablation) {
  return ablation == CircuitAblation::Zero ? "zero" : "mean";
}

CircuitAblation circuit_ablation_from_string(const std::string& s) {
  if (s == "zero") return CircuitAblation::Zero;
  if (s == "mean") return CircuitAblation::Mean;
  throw std::invalid_argument("unknown ablation '" + s + "' (zero or mean)");
}

namespace {

// What a role computes, in the automaton's terms (the vocabulary of role.hpp).
const char* role_meaning(RoleKind kind) {
  switch (kind) {
    case RoleKind::Unspecified:
      return "not recorded (a part another tool wrote)";
    case RoleKind::Token:
      return "one-hot of the current letter";
    case RoleKind::Bos:
      return "1 at position 0 (<bos>) only";
    case RoleKind::Constant:
      return "1 at every position";
    case RoleKind::PositionCode:
      return "+-1 bits of a position: keys and queries of exact lookups";
    case RoleKind::Position:
      return "the position t: keys of latest-position lookups";
    case RoleKind::LogRemaining:
      return "ln(max_len + 1 - t): makes a head sum instead of average";
    case RoleKind::BlockCode:
      return "+-1 bits of the block of t";
    case RoleKind::BlockStart:
      return "1 at the first position of every block";
    case RoleKind::LogRemainingInBlock:
      return "a query that sums over t's block";
    case RoleKind::LogRemainingBlocks:
      return "a query that sums over block starts";
    case RoleKind::LetterBack:
      return "the letter `step` positions back";
    case RoleKind::ScanPrefix:
      return "the running product of the letters' transformations";
    case RoleKind::ScanFetch:
      return "scan step: fetches the prefix product 2^(step-1) positions back";
    case RoleKind::ScanCompose:
      return "scan step: composes the fetched product with its own";
    case RoleKind::Transition:
      return "the level's action from the letter and upper coordinates";
    case RoleKind::ResetFlag:
      return "1 where the level resets";
    case RoleKind::ResetValue:
      return "the value a reset writes";
    case RoleKind::GroupElement:
      return "the permutation a position applies to the level's tiles";
    case RoleKind::CounterIncrement:
      return "the increment of a Z_p counter at this position";
    case RoleKind::CounterSum:
      return "the running sum of a Z_p counter's increments";
    case RoleKind::CounterWindowSum:
      return "a Z_p counter's sum over t's block so far";
    case RoleKind::CounterBlockResidue:
      return "at a block start: the block before's sum mod p";
    case RoleKind::CounterBlockSum:
      return "the sum of the block residues before t's block";
    case RoleKind::CounterResidue:
      return "a Z_p counter's value (sum mod p) as a one-hot";
    case RoleKind::Memory:
      return "memory unit: the value of the latest reset";
    case RoleKind::Coordinate:
      return "the level's coordinate (one-hot over its values)";
    case RoleKind::PreviousCoordinate:
      return "the level's coordinate at t-1";
    case RoleKind::WalkSum:
      return "the running sum of a clamped walk's moves";
    case RoleKind::WalkResidue:
      return "the walk's sum mod n as a one-hot";
    case RoleKind::LatestVisit:
      return "the walk's sum at the latest visit of a class";
    case RoleKind::Departure:
      return "the classes a letter's moves leave";
    case RoleKind::DepartureUp:
      return "which of them it leaves upwards";
    case RoleKind::LatestDeparture:
      return "whether the latest departure went up";
    case RoleKind::LetterCode:
      return "the number a letter contributes to the value";
    case RoleKind::ContextualValue:
      return "one number per prefix: a weighted mean of letter codes";
    case RoleKind::ValueThreshold:
      return "whether the value passed each threshold";
    case RoleKind::ValueDecode:
      return "thresholds passed -> the automaton's state";
    case RoleKind::Decode:
      return "coordinates -> the automaton's state";
    case RoleKind::State:
      return "one-hot of the automaton's state";
    case RoleKind::Count:
      break;
  }
  return "?";
}

std::string meaning(const Role& role) {
  return describe(role) + " (" + role_meaning(role.kind) + ")";
}

using Dims = std::vector<int>;  // sorted residual dimensions

// Columns (by_rows false) or rows (true) of `m` that hold a nonzero.
std::vector<char> support(const SparseMatrix& m, bool by_rows, int size) {
  std::vector<char> used(size, 0);
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      if (it.value() != 0.0f) used[by_rows ? it.row() : it.col()] = 1;
  return used;
}

Dims to_dims(const std::vector<char>& used) {
  Dims out;
  for (int i = 0; i < static_cast<int>(used.size()); ++i)
    if (used[i]) out.push_back(i);
  return out;
}

enum class NodeKind { Input, Head, Mlp, Logits };

struct Writer {
  std::string name;
  NodeKind kind;
  int layer = -1, head = -1;
  Dims writes;
};

struct Reader {
  std::string node;  // a{L}.h{H}, m{L}, logits
  char port = 0;     // 'q', 'k', 'v' for a head, 0 otherwise
  NodeKind kind;
  int layer = -1, head = -1;
  Dims reads;
};

// One unit of ablation: the contribution of `writer` to `reader`'s input on `dims`.
struct Unit {
  int writer = 0, reader = 0;
  Dims dims;
  std::string edge;  // MIB edge name
  int through = -1;  // subspace granularity: index into the edge's "through" list
};

struct Structure {
  std::vector<ResidualSubspace> subspaces;
  std::vector<int> subspace_of;  // per dimension
  std::vector<Writer> writers;   // input, then per layer its heads and its MLP
  std::vector<Reader> readers;   // per layer q, k, v of each head and its MLP, then logits
  std::vector<Unit> units;
};

std::vector<ResidualSubspace> subspaces_of(const Network& net) {
  if (!net.subspaces.empty()) return net.subspaces;
  std::vector<ResidualSubspace> out;
  for (std::size_t i = 0; i < net.residual_labels.size(); ++i)
    out.push_back({net.residual_labels[i], static_cast<int>(i), 1, {}});
  return out;
}

Dims intersect(const Dims& a, const Dims& b) {
  Dims out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Does W's output reach R's input? Heads of one layer read the stream before that layer's
// heads; its MLP reads after them.
bool before(const Writer& w, const Reader& r) {
  if (w.kind == NodeKind::Input || r.kind == NodeKind::Logits) return true;
  if (w.layer != r.layer) return w.layer < r.layer;
  return w.kind == NodeKind::Head && r.kind == NodeKind::Mlp;
}

std::string edge_name(const Writer& w, const Reader& r) {
  std::string name = w.name + "->" + r.node;
  if (r.port) name += std::string("<") + r.port + ">";
  return name;
}

Structure structure_of(const Network& net, CircuitGranularity granularity) {
  const int d = net.d_model();
  Structure s;
  s.subspaces = subspaces_of(net);
  s.subspace_of.assign(d, -1);
  for (std::size_t i = 0; i < s.subspaces.size(); ++i)
    for (int j = 0; j < s.subspaces[i].width; ++j)
      if (s.subspaces[i].first + j < d)
        s.subspace_of[s.subspaces[i].first + j] = static_cast<int>(i);

  std::vector<char> input(d, 0);
  for (int j = 0; j < d; ++j)
    input[j] = (net.token_embedding.col(j).array() != 0).any() ||
               (net.position_embedding.col(j).array() != 0).any();
  s.writers.push_back({"input", NodeKind::Input, -1, -1, to_dims(input)});
  for (int L = 0; L < static_cast<int>(net.layers.size()); ++L) {
    const Layer& layer = net.layers[L];
    for (int h = 0; h < static_cast<int>(layer.heads.size()); ++h) {
      const AttentionHead& head = layer.heads[h];
      const std::string node = "a" + std::to_string(L) + ".h" + std::to_string(h);
      s.writers.push_back({node, NodeKind::Head, L, h, to_dims(support(head.output, false, d))});
      const SparseMatrix* inputs[3] = {&head.query, &head.key, &head.value};
      for (int p = 0; p < 3; ++p)
        s.readers.push_back(
            {node, "qkv"[p], NodeKind::Head, L, h, to_dims(support(*inputs[p], true, d))});
    }
    if (layer.mlp) {
      std::vector<char> writes = support(layer.mlp->out_weight, true, d);
      for (int j = 0; j < d; ++j)
        if (layer.mlp->out_bias[j] != 0.0f) writes[j] = 1;
      const std::string node = "m" + std::to_string(L);
      s.writers.push_back({node, NodeKind::Mlp, L, -1, to_dims(writes)});
      s.readers.push_back(
          {node, 0, NodeKind::Mlp, L, -1, to_dims(support(layer.mlp->in_weight, false, d))});
    }
  }
  s.readers.push_back(
      {"logits", 0, NodeKind::Logits, -1, -1, to_dims(support(net.unembedding, true, d))});

  for (int r = 0; r < static_cast<int>(s.readers.size()); ++r)
    for (int w = 0; w < static_cast<int>(s.writers.size()); ++w) {
      if (!before(s.writers[w], s.readers[r])) continue;
      Dims dims = intersect(s.writers[w].writes, s.readers[r].reads);
      if (dims.empty()) continue;
      const std::string edge = edge_name(s.writers[w], s.readers[r]);
      if (granularity == CircuitGranularity::Head) {
        s.units.push_back({w, r, std::move(dims), edge, -1});
        continue;
      }
      // One unit per subspace, in the stream's order (a dimension outside every subspace
      // makes a unit of its own subspace index -1).
      int through = 0;
      for (std::size_t i = 0; i < dims.size();) {
        const int sub = s.subspace_of[dims[i]];
        Dims part;
        while (i < dims.size() && s.subspace_of[dims[i]] == sub) part.push_back(dims[i++]);
        s.units.push_back({w, r, std::move(part), edge, through++});
      }
    }
  return s;
}

std::vector<std::string> subspace_names(const Structure& s, const Dims& dims) {
  std::vector<std::string> out;
  int last = -2;
  for (int j : dims) {
    const int sub = s.subspace_of[j];
    if (sub == last) continue;
    last = sub;
    out.push_back(sub < 0 ? "(unnamed)" : s.subspaces[sub].name);
  }
  return out;
}

nlohmann::json through_json(const Structure& s, const Dims& dims) {
  const int sub = s.subspace_of[dims.front()];
  nlohmann::json out = {{"subspace", sub < 0 ? "(unnamed)" : s.subspaces[sub].name},
                        {"dims", dims}};
  if (sub >= 0) {
    out["role"] = role_to_json(s.subspaces[sub].role);
    out["meaning"] = meaning(s.subspaces[sub].role);
  }
  return out;
}

const char* port_word(char port) {
  return port == 'q' ? "query" : port == 'k' ? "key" : port == 'v' ? "value" : "input";
}

}  // namespace

nlohmann::json circuit_json(const Network& net, CircuitGranularity granularity) {
  const Structure s = structure_of(net, granularity);
  int n_heads = 0;
  for (const auto& layer : net.layers) n_heads = std::max<int>(n_heads, layer.heads.size());

  std::vector<char> writer_used(s.writers.size(), 0), dim_used(net.d_model(), 0);
  std::vector<char> reader_used(s.readers.size(), 0);
  for (const Unit& u : s.units) {
    writer_used[u.writer] = reader_used[u.reader] = 1;
    for (int j : u.dims) dim_used[j] = 1;
  }

  nlohmann::json nodes = nlohmann::json::object();
  for (std::size_t w = 0; w < s.writers.size(); ++w) {
    const Writer& wr = s.writers[w];
    nlohmann::json node = {{"in_graph", wr.kind == NodeKind::Input || writer_used[w] != 0},
                           {"writes", subspace_names(s, wr.writes)}};
    if (wr.kind == NodeKind::Input) {
      node["kind"] = "input";
      node["meaning"] =
          "the token and position embeddings: the letter, <bos> and position features";
    } else if (wr.kind == NodeKind::Head) {
      const AttentionHead& head = net.layers[wr.layer].heads[wr.head];
      node["kind"] = "attention head";
      node["layer"] = wr.layer;
      node["head"] = wr.head;
      node["name"] = head.name;
      node["head_kind"] = to_string(head.kind);
      node["role"] = role_to_json(head.role);
      node["meaning"] = meaning(head.role);
      for (int p = 0; p < 3; ++p)
        for (const Reader& r : s.readers)
          if (r.kind == NodeKind::Head && r.layer == wr.layer && r.head == wr.head &&
              r.port == "qkv"[p])
            node[std::string("reads_") + r.port] = subspace_names(s, r.reads);
    } else {
      const Mlp& mlp = *net.layers[wr.layer].mlp;
      node["kind"] = "mlp";
      node["layer"] = wr.layer;
      node["hidden"] = mlp.hidden();
      nlohmann::json blocks = nlohmann::json::array();
      std::string text;
      for (const MlpBlock& b : mlp.blocks) {
        blocks.push_back({{"name", b.name},
                          {"first", b.first},
                          {"count", b.count},
                          {"role", role_to_json(b.role)},
                          {"meaning", meaning(b.role)}});
        text += (text.empty() ? "" : "; ") + meaning(b.role);
      }
      node["blocks"] = blocks;
      node["meaning"] = text.empty() ? net.layers[wr.layer].purpose : text;
      for (const Reader& r : s.readers)
        if (r.kind == NodeKind::Mlp && r.layer == wr.layer)
          node["reads"] = subspace_names(s, r.reads);
    }
    if (!node["in_graph"].get<bool>()) node["why_not"] = "nothing later reads what it writes";
    nodes[wr.name] = node;
  }
  const Reader& logits = s.readers.back();
  nodes["logits"] = {{"in_graph", true},
                     {"kind", "logits"},
                     {"reads", subspace_names(s, logits.reads)},
                     {"meaning", "one logit per state of the automaton; the argmax is the state"}};
  // An MLP that reads nothing in the circuit still computes from its bias: note readers
  // without edges.
  for (std::size_t r = 0; r < s.readers.size(); ++r)
    if (!reader_used[r] && s.readers[r].kind == NodeKind::Mlp)
      nodes[s.readers[r].node]["reads_nothing"] = true;

  nlohmann::json edges = nlohmann::json::object();
  for (const Unit& u : s.units) {
    const Writer& w = s.writers[u.writer];
    const Reader& r = s.readers[u.reader];
    auto it = edges.find(u.edge);
    if (it == edges.end()) {
      const std::string reader_text = r.kind == NodeKind::Logits
                                          ? std::string("the logits")
                                          : std::string(port_word(r.port)) + " of " + r.node;
      nlohmann::json edge = {{"score", 1.0},
                             {"in_graph", true},
                             {"from", w.name},
                             {"to", r.node},
                             {"subspaces", nlohmann::json::array()},
                             {"dims", 0},
                             {"meaning", w.name + " writes, " + reader_text + " reads"}};
      if (r.port) edge["qkv"] = std::string(1, r.port);
      it = edges.emplace(u.edge, edge).first;
    }
    nlohmann::json& edge = *it;
    for (const auto& name : subspace_names(s, u.dims)) edge["subspaces"].push_back(name);
    edge["dims"] = edge["dims"].get<int>() + static_cast<int>(u.dims.size());
    if (granularity == CircuitGranularity::Subspace)
      edge["through"].push_back(through_json(s, u.dims));
  }
  for (auto& [name, edge] : edges.items()) {
    std::string via;
    for (const auto& sub : edge["subspaces"])
      via += (via.empty() ? "" : ", ") + sub.get<std::string>();
    edge["meaning"] = edge["meaning"].get<std::string>() + " through " + via;
  }

  nlohmann::json subspaces = nlohmann::json::array();
  for (std::size_t i = 0; i < s.subspaces.size(); ++i) {
    const ResidualSubspace& sub = s.subspaces[i];
    bool used = false;
    for (int j = sub.first; j < sub.first + sub.width && j < net.d_model(); ++j)
      used |= dim_used[j] != 0;
    subspaces.push_back({{"name", sub.name},
                         {"first", sub.first},
                         {"width", sub.width},
                         {"role", role_to_json(sub.role)},
                         {"meaning", meaning(sub.role)},
                         {"used", used}});
  }
  int unused = 0;
  for (char c : dim_used) unused += c == 0;

  return {{"format", "krc circuit"},
          {"version", 1},
          {"granularity", to_string(granularity)},
          {"ablation", "zero"},
          {"cfg",
           {{"n_layers", net.layers.size()},
            {"n_heads", n_heads},
            {"d_model", net.d_model()},
            {"parallel_attn_mlp", false}}},
          {"automaton", net.automaton.is_object() ? net.automaton.value("name", nlohmann::json("?"))
                                                  : nlohmann::json("?")},
          {"states", net.states},
          {"vocabulary", net.vocabulary},
          {"units", s.units.size()},
          {"unused_dims", unused},
          {"nodes", nodes},
          {"edges", edges},
          {"residual_subspaces", subspaces}};
}

namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using SparseD = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

// What one pass ablates: a unit, or every unit of a writer (a component), or nothing.
struct Ablated {
  int unit = -1, writer = -1;
  bool operator()(const Unit& u, int index) const { return index == unit || u.writer == writer; }
};

// The ablation forward in float64: every writer's output kept, every reader's input the sum
// of its units' contributions on their dimensions; each head's weights are the runtime's for
// the network's attention kind (attention_weights.hpp: hard select heads the latest maximum,
// hardmax every head the mean over its tied maxima).
class AblationForward {
 public:
  AblationForward(const Network& net, const Structure& s) : net_(net), s_(s) {
    units_of_.resize(s.readers.size());
    for (int u = 0; u < static_cast<int>(s.units.size()); ++u)
      units_of_[s.units[u].reader].push_back(u);
    int reader = 0, writer = 1;
    for (const Layer& layer : net.layers) {
      LayerWeights lw;
      for (const AttentionHead& head : layer.heads) {
        lw.heads.push_back({head.query.cast<double>(), head.key.cast<double>(),
                            head.value.cast<double>(), head.output.cast<double>(), head.kind,
                            reader, writer});
        reader += 3;
        ++writer;
      }
      if (layer.mlp) {
        lw.mlp_in = layer.mlp->in_weight.cast<double>().transpose();
        lw.mlp_out = layer.mlp->out_weight.cast<double>().transpose();
        lw.mlp_in_bias = layer.mlp->in_bias.cast<double>().transpose();
        lw.mlp_out_bias = layer.mlp->out_bias.cast<double>().transpose();
        lw.mlp_reader = reader++;
        lw.mlp_writer = writer++;
      }
      layers_.push_back(std::move(lw));
    }
    unembedding_ = net.unembedding.cast<double>();
  }

  // Writer outputs of one word [T+1, d] each, and the logits. `skip`: the units ablated, their
  // contributions left out, or with `mean` (each writer's mean output by position, at least
  // T+1 rows) replaced by their means; `base`: the unablated pass of the same word, whose
  // writers before the first ablated unit's reader are reused.
  struct Pass {
    std::vector<Matrix> out;
    Matrix logits;
  };

  Pass run(const std::vector<LetterId>& word, Ablated skip = {}, const Pass* base = nullptr,
           const std::vector<Matrix>* mean = nullptr) const {
    const int rows = static_cast<int>(word.size()) + 1, d = net_.d_model();
    Pass p;
    p.out.resize(s_.writers.size());
    int first_reader = static_cast<int>(s_.readers.size());
    for (int u = 0; u < static_cast<int>(s_.units.size()); ++u)
      if (skip(s_.units[u], u)) first_reader = std::min(first_reader, s_.units[u].reader);
    Matrix& in = p.out[0];
    if (base) {
      in = base->out[0];
    } else {
      in.resize(rows, d);
      for (int t = 0; t < rows; ++t)
        in.row(t) = (net_.token_embedding.row(t == 0 ? 0 : word[t - 1] + 1) +
                     net_.position_embedding.row(t))
                        .cast<double>();
    }
    for (const LayerWeights& lw : layers_) {
      for (const HeadWeights& h : lw.heads) {
        if (base && h.reader + 2 < first_reader) {
          p.out[h.writer] = base->out[h.writer];
          continue;
        }
        const Eigen::MatrixXd q = input(p, h.reader, skip, rows, mean) * h.query;
        const Eigen::MatrixXd k = input(p, h.reader + 1, skip, rows, mean) * h.key;
        const Matrix v = input(p, h.reader + 2, skip, rows, mean) * h.value;
        Matrix mixed(rows, v.cols());
        for (int t = 0; t < rows; ++t)
          mixed.row(t) = attention_weights(attention_scores(q, k, t, net_.attention_scale),
                                           net_.attention, h.kind)
                             .transpose() *
                         v.topRows(t + 1);
        p.out[h.writer] = mixed * h.output;
      }
      if (lw.mlp_reader < 0) continue;
      if (base && lw.mlp_reader < first_reader) {
        p.out[lw.mlp_writer] = base->out[lw.mlp_writer];
        continue;
      }
      Matrix hidden = input(p, lw.mlp_reader, skip, rows, mean) * lw.mlp_in;
      hidden.rowwise() += lw.mlp_in_bias;
      hidden = hidden.cwiseMax(0.0);
      p.out[lw.mlp_writer] = hidden * lw.mlp_out;
      p.out[lw.mlp_writer].rowwise() += lw.mlp_out_bias;
    }
    p.logits = input(p, static_cast<int>(s_.readers.size()) - 1, skip, rows, mean) * unembedding_;
    return p;
  }

 private:
  struct HeadWeights {
    SparseD query, key, value, output;
    HeadKind kind;
    int reader, writer;
  };
  struct LayerWeights {
    std::vector<HeadWeights> heads;
    SparseD mlp_in, mlp_out;
    Eigen::RowVectorXd mlp_in_bias, mlp_out_bias;
    int mlp_reader = -1, mlp_writer = -1;
  };

  // A reader's input: its units' contributions, each on its own dimensions; the ablated ones
  // left out, or their writers' mean outputs there.
  Matrix input(const Pass& p, int reader, Ablated skip, int rows,
               const std::vector<Matrix>* mean) const {
    Matrix x = Matrix::Zero(rows, net_.d_model());
    for (int u : units_of_[reader]) {
      const bool ablated = skip(s_.units[u], u);
      if (ablated && !mean) continue;
      const Matrix& out = ablated ? (*mean)[s_.units[u].writer] : p.out[s_.units[u].writer];
      for (int j : s_.units[u].dims) x.col(j) += out.col(j).head(rows);
    }
    return x;
  }

  const Network& net_;
  const Structure& s_;
  std::vector<std::vector<int>> units_of_;
  std::vector<LayerWeights> layers_;
  SparseD unembedding_;
};

// The argmax of a row, or -1 on a tie for the maximum.
int argmax(const Matrix& logits, int t) {
  int best = 0;
  bool tie = false;
  for (int j = 1; j < logits.cols(); ++j) {
    if (logits(t, j) > logits(t, best)) {
      best = j;
      tie = false;
    } else if (logits(t, j) == logits(t, best)) {
      tie = true;
    }
  }
  return tie ? -1 : best;
}

nlohmann::json word_json(const Network& net, const std::vector<LetterId>& word) {
  nlohmann::json out = nlohmann::json::array();
  for (LetterId a : word) out.push_back(net.vocabulary[a + 1]);
  return out;
}

}  // namespace

Eigen::MatrixXd circuit_logits(const Network& net, const std::vector<LetterId>& word,
                               CircuitGranularity granularity) {
  if (static_cast<int>(word.size()) > net.max_len)
    throw std::invalid_argument("the word is longer than the network's max_len");
  for (LetterId a : word)
    if (static_cast<std::size_t>(a) + 1 >= net.vocabulary.size())
      throw std::invalid_argument("a letter outside the network's vocabulary");
  const Structure s = structure_of(net, granularity);
  return AblationForward(net, s).run(word).logits;
}

std::vector<std::vector<LetterId>> circuit_check_words(const Network& net,
                                                       const CircuitCheckOptions& options,
                                                       nlohmann::json* description) {
  const int letters = static_cast<int>(net.vocabulary.size()) - 1;
  // All words of one length, then seeded random ones.
  int length = 0;
  long long count = 1;
  if (letters > 0)
    while (length < net.max_len && count * letters <= options.max_exhaustive_words) {
      count *= letters;
      ++length;
    }
  std::vector<std::vector<LetterId>> words;
  std::vector<LetterId> word(length, 0);
  for (long long i = 0; i < count; ++i) {
    long long rest = i;
    for (int t = length - 1; t >= 0; --t) {
      word[t] = static_cast<LetterId>(rest % letters);
      rest /= letters;
    }
    words.push_back(word);
  }
  const int random_length = options.random_length > 0 ? std::min(options.random_length, net.max_len)
                                                      : std::min(net.max_len, 24);
  const long long random_words = letters > 0 ? options.random_words : 0;
  std::mt19937_64 rng(options.seed);
  for (long long i = 0; i < random_words; ++i) {
    std::vector<LetterId> w(random_length);
    std::uniform_int_distribution<int> pick(0, letters - 1);
    for (auto& a : w) a = static_cast<LetterId>(pick(rng));
    words.push_back(std::move(w));
  }
  if (description)
    *description = {{"exhaustive_length", length},
                    {"exhaustive_words", count},
                    {"random_words", random_words},
                    {"random_length", random_length},
                    {"seed", options.seed}};
  return words;
}

namespace {

// Each writer's output averaged over `reference`, position by position (row t: the words of at
// least t letters), in the whole network's pass; `rows` rows, the ones no word reaches zero.
std::vector<Matrix> mean_outputs(const AblationForward& forward, const Structure& s,
                                 const std::vector<std::vector<LetterId>>& reference, int rows,
                                 int d) {
  std::vector<Matrix> mean(s.writers.size(), Matrix::Zero(rows, d));
  std::vector<double> reach(rows, 0.0);
  for (const auto& word : reference) {
    const auto pass = forward.run(word);
    const int n = static_cast<int>(word.size()) + 1;
    for (std::size_t w = 0; w < mean.size(); ++w) mean[w].topRows(n) += pass.out[w];
    for (int t = 0; t < n; ++t) reach[t] += 1;
  }
  for (Matrix& m : mean)
    for (int t = 0; t < rows; ++t)
      if (reach[t] > 0) m.row(t) /= reach[t];
  return mean;
}

}  // namespace

bool check_circuit(const Network& net, const Automaton& automaton, nlohmann::json& circuit,
                   const CircuitCheckOptions& options) {
  const CircuitGranularity granularity =
      circuit_granularity_from_string(circuit.value("granularity", std::string("head")));
  const Structure s = structure_of(net, granularity);
  nlohmann::json words_json;
  const std::vector<std::vector<LetterId>> words = circuit_check_words(net, options, &words_json);
  const bool by_mean = options.ablation == CircuitAblation::Mean;
  const std::vector<std::vector<LetterId>>& reference =
      options.reference_words.empty() ? words : options.reference_words;
  std::size_t longest = 0, longest_reference = 0;
  for (const auto& w : words) longest = std::max(longest, w.size());
  for (const auto& w : reference) {
    if (static_cast<int>(w.size()) > net.max_len)
      throw std::invalid_argument("a reference word is longer than the network's max_len");
    for (LetterId a : w)
      if (static_cast<std::size_t>(a) + 1 >= net.vocabulary.size())
        throw std::invalid_argument("a reference word has a letter outside the vocabulary");
    longest_reference = std::max(longest_reference, w.size());
  }
  if (by_mean && longest_reference < longest)
    throw std::invalid_argument("the reference words (the longest " +
                                std::to_string(longest_reference) +
                                " letters) do not reach every position of the tested words (" +
                                std::to_string(longest) + " letters): no mean there");
  const int rows = static_cast<int>(std::max(longest, longest_reference)) + 1;
  check_memory("the circuit check's activations",
               saturating_mul(saturating_mul(s.writers.size() * (by_mean ? 2 : 1) + 4, rows),
                              saturating_mul(net.d_model(), 2 * sizeof(double))));

  AblationForward forward(net, s);
  std::vector<Matrix> mean;
  if (by_mean) mean = mean_outputs(forward, s, reference, rows, net.d_model());
  const std::vector<Matrix>* ablated_to = by_mean ? &mean : nullptr;
  // What is ablated alone: each unit, then each component (a head or MLP block with units,
  // every unit it writes ablated at once).
  std::vector<Ablated> targets;
  for (std::size_t u = 0; u < s.units.size(); ++u) targets.push_back({static_cast<int>(u), -1});
  std::vector<int> components;
  for (std::size_t w = 1; w < s.writers.size(); ++w)
    for (const Unit& unit : s.units)
      if (unit.writer == static_cast<int>(w)) {
        components.push_back(static_cast<int>(w));
        targets.push_back({-1, static_cast<int>(w)});
        break;
      }
  long long positions = 0, wrong = 0;
  nlohmann::json first_wrong;
  struct Witness {
    int word = -1, position = -1, state = -2;
  };
  std::vector<Witness> witness(targets.size()), zero_witness(targets.size());
  // Every target still without a witness (of `wanted`) ablated on word i (its unablated pass
  // `base`), to the means `to` or to zero.
  auto search = [&](std::size_t i, const std::vector<StateId>& expected,
                    const AblationForward::Pass& base, const std::vector<Matrix>* to,
                    std::vector<Witness>& found_here, const std::vector<char>& wanted) {
    for (std::size_t x = 0; x < targets.size(); ++x) {
      if (!wanted[x] || found_here[x].word >= 0) continue;
      const auto ablated = forward.run(words[i], targets[x], &base, to);
      for (int t = 0; t < ablated.logits.rows(); ++t) {
        const int got = argmax(ablated.logits, t);
        if (got == static_cast<int>(expected[t])) continue;
        found_here[x] = {static_cast<int>(i), t, got};
        break;
      }
    }
  };
  const std::vector<char> every_target(targets.size(), 1);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::vector<StateId> expected = automaton.run(words[i]);
    const auto base = forward.run(words[i]);
    for (int t = 0; t < base.logits.rows(); ++t) {
      ++positions;
      const int got = argmax(base.logits, t);
      if (got == static_cast<int>(expected[t])) continue;
      if (wrong++ == 0)
        first_wrong = {
            {"word", word_json(net, words[i])},
            {"position", t},
            {"expected", net.states[expected[t]]},
            {"got", got < 0 ? nlohmann::json("a tie") : nlohmann::json(net.states[got])}};
    }
    search(i, expected, base, ablated_to, witness, every_target);
  }
  // Under mean ablation, the targets it leaves redundant: necessary under zero ablation?
  std::vector<char> mean_redundant(targets.size(), 0);
  bool any_mean_redundant = false;
  for (std::size_t x = 0; x < targets.size(); ++x) {
    mean_redundant[x] = by_mean && witness[x].word < 0;
    any_mean_redundant |= mean_redundant[x] != 0;
  }
  if (any_mean_redundant)
    for (std::size_t i = 0; i < words.size(); ++i)
      search(i, automaton.run(words[i]), forward.run(words[i]), nullptr, zero_witness,
             mean_redundant);

  auto state_json = [&](int state) {
    return state < 0 ? nlohmann::json("a tie") : nlohmann::json(net.states[state]);
  };
  auto witness_json = [&](const Witness& w) {
    const auto& word = words[w.word];
    return nlohmann::json{{"word", word_json(net, word)},
                          {"position", w.position},
                          {"expected", net.states[automaton.run(word)[w.position]]},
                          {"ablated", state_json(w.state)}};
  };
  // Records target x's verdict in `target` (its edge, "through" entry or node), its name in
  // the lists of the redundant and of the necessary only under zero ablation.
  auto record = [&](std::size_t x, nlohmann::json& target, const std::string& name,
                    std::vector<std::string>& redundant, std::vector<std::string>& zero_only) {
    const bool necessary = witness[x].word >= 0;
    target["necessary"] = necessary;
    target["redundant"] = !necessary;
    if (necessary) {
      target["witness"] = witness_json(witness[x]);
      return 1;
    }
    redundant.push_back(name);
    if (zero_witness[x].word >= 0) {
      target["zero_ablation_witness"] = witness_json(zero_witness[x]);
      zero_only.push_back(name);
    }
    return 0;
  };
  std::size_t found = 0, components_found = 0;
  std::vector<std::string> redundant, zero_only, components_redundant, components_zero_only;
  for (std::size_t u = 0; u < s.units.size(); ++u) {
    const Unit& unit = s.units[u];
    nlohmann::json& target = unit.through < 0
                                 ? circuit["edges"][unit.edge]
                                 : circuit["edges"][unit.edge]["through"][unit.through];
    const std::string name = unit.through < 0
                                 ? unit.edge
                                 : unit.edge + " [" + target["subspace"].get<std::string>() + "]";
    found += record(u, target, name, redundant, zero_only);
  }
  for (std::size_t c = 0; c < components.size(); ++c) {
    const std::string& name = s.writers[components[c]].name;
    components_found += record(s.units.size() + c, circuit["nodes"][name], name,
                               components_redundant, components_zero_only);
  }
  circuit["ablation"] = to_string(options.ablation);
  nlohmann::json check = {{"ablation", to_string(options.ablation)},
                          {"arithmetic", "float64"},
                          {"attention", to_string(net.attention)},
                          {"words", words_json},
                          {"circuit_only", {{"positions", positions}, {"wrong", wrong}}},
                          {"units", s.units.size()},
                          {"necessary", found},
                          {"redundant", redundant},
                          {"components",
                           {{"count", components.size()},
                            {"necessary", components_found},
                            {"redundant", components_redundant}}}};
  if (by_mean) {
    check["reference"] = {{"words", reference.size()},
                          {"of", options.reference_words.empty() ? "the tested words" : "given"},
                          {"mean", "per position"}};
    check["zero_only"] = zero_only;
    check["components"]["zero_only"] = components_zero_only;
  }
  if (wrong > 0) check["circuit_only"]["first_wrong"] = first_wrong;
  circuit["check"] = check;
  return wrong == 0;
}

}  // namespace krc
