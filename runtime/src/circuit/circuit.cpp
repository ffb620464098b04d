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

  // Writer outputs of one word [T+1, d] each, and the logits. `skip`: a unit left out (-1:
  // none); `base`: the unablated pass of the same word, whose writers before the skipped
  // unit's reader are reused.
  struct Pass {
    std::vector<Matrix> out;
    Matrix logits;
  };

  Pass run(const std::vector<LetterId>& word, int skip = -1, const Pass* base = nullptr) const {
    const int rows = static_cast<int>(word.size()) + 1, d = net_.d_model();
    Pass p;
    p.out.resize(s_.writers.size());
    const int first_reader = skip >= 0 ? s_.units[skip].reader : 0;
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
        const Eigen::MatrixXd q = input(p, h.reader, skip, rows) * h.query;
        const Eigen::MatrixXd k = input(p, h.reader + 1, skip, rows) * h.key;
        const Matrix v = input(p, h.reader + 2, skip, rows) * h.value;
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
      Matrix hidden = input(p, lw.mlp_reader, skip, rows) * lw.mlp_in;
      hidden.rowwise() += lw.mlp_in_bias;
      hidden = hidden.cwiseMax(0.0);
      p.out[lw.mlp_writer] = hidden * lw.mlp_out;
      p.out[lw.mlp_writer].rowwise() += lw.mlp_out_bias;
    }
    p.logits = input(p, static_cast<int>(s_.readers.size()) - 1, skip, rows) * unembedding_;
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

  // A reader's input: its units' contributions, each on its own dimensions.
  Matrix input(const Pass& p, int reader, int skip, int rows) const {
    Matrix x = Matrix::Zero(rows, net_.d_model());
    for (int u : units_of_[reader]) {
      if (u == skip) continue;
      const Matrix& out = p.out[s_.units[u].writer];
      for (int j : s_.units[u].dims) x.col(j) += out.col(j);
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

bool check_circuit(const Network& net, const Automaton& automaton, nlohmann::json& circuit,
                   const CircuitCheckOptions& options) {
  const CircuitGranularity granularity =
      circuit_granularity_from_string(circuit.value("granularity", std::string("head")));
  const Structure s = structure_of(net, granularity);
  const int letters = static_cast<int>(net.vocabulary.size()) - 1;

  // The tested words: all of one length, then seeded random ones.
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
  const int longest = std::max(length, random_length) + 1;
  check_memory("the circuit check's activations",
               saturating_mul(saturating_mul(s.writers.size() + 4, longest),
                              saturating_mul(net.d_model(), 2 * sizeof(double))));

  AblationForward forward(net, s);
  long long positions = 0, wrong = 0;
  nlohmann::json first_wrong;
  std::vector<int> witness_word(s.units.size(), -1), witness_position(s.units.size(), -1),
      witness_state(s.units.size(), -2);
  std::size_t found = 0;
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
    if (found == s.units.size()) continue;
    for (std::size_t u = 0; u < s.units.size(); ++u) {
      if (witness_word[u] >= 0) continue;
      const auto ablated = forward.run(words[i], static_cast<int>(u), &base);
      for (int t = 0; t < ablated.logits.rows(); ++t) {
        const int got = argmax(ablated.logits, t);
        if (got == static_cast<int>(expected[t])) continue;
        witness_word[u] = static_cast<int>(i);
        witness_position[u] = t;
        witness_state[u] = got;
        ++found;
        break;
      }
    }
  }

  std::vector<std::string> redundant;
  for (std::size_t u = 0; u < s.units.size(); ++u) {
    const Unit& unit = s.units[u];
    nlohmann::json& target = unit.through < 0
                                 ? circuit["edges"][unit.edge]
                                 : circuit["edges"][unit.edge]["through"][unit.through];
    if (witness_word[u] < 0) {
      target["necessary"] = false;
      target["redundant"] = true;
      redundant.push_back(unit.through < 0
                              ? unit.edge
                              : unit.edge + " [" + target["subspace"].get<std::string>() + "]");
      continue;
    }
    const auto& w = words[witness_word[u]];
    const int t = witness_position[u];
    target["necessary"] = true;
    target["redundant"] = false;
    target["witness"] = {
        {"word", word_json(net, w)},
        {"position", t},
        {"expected", net.states[automaton.run(w)[t]]},
        {"ablated", witness_state[u] < 0 ? nlohmann::json("a tie")
                                         : nlohmann::json(net.states[witness_state[u]])}};
  }
  nlohmann::json check = {{"ablation", "zero"},
                          {"arithmetic", "float64"},
                          {"attention", to_string(net.attention)},
                          {"words",
                           {{"exhaustive_length", length},
                            {"exhaustive_words", count},
                            {"random_words", random_words},
                            {"random_length", random_length},
                            {"seed", options.seed}}},
                          {"circuit_only", {{"positions", positions}, {"wrong", wrong}}},
                          {"units", s.units.size()},
                          {"necessary", found},
                          {"redundant", redundant}};
  if (wrong > 0) check["circuit_only"]["first_wrong"] = first_wrong;
  circuit["check"] = check;
  return wrong == 0;
}

}  // namespace krc
