#include "network_drawing.hpp"

#include <gvc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/runtime/circuit.hpp"

namespace krc {

namespace {

// ---- text in DOT

// A double-quoted DOT string: quotes and backslashes escaped, lines joined by \n.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Text inside an HTML-like label.
std::string html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += "<BR/>";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// ---- colours: one per family of roles, the legend's rows

struct Family {
  const char* name;
  const char* colour;
};

const Family kFamilies[] = {
    {"input features", "#e0e0e0"},          // 0
    {"earlier letters", "#cfd8dc"},         // 1
    {"parallel prefix (scan)", "#9ecae1"},  // 2
    {"transition, reset", "#fdae6b"},       // 3
    {"group, counters Z_p", "#a1d99b"},     // 4
    {"memory (latest reset)", "#bcbddc"},   // 5
    {"level coordinate", "#9edae5"},        // 6
    {"clamped walk", "#e7cb94"},            // 7
    {"contextual mapping", "#fbb4c4"},      // 8
    {"decode, state", "#fc9272"},           // 9
    {"unspecified", "#ffffff"},             // 10
};

int family_of(RoleKind kind) {
  switch (kind) {
    case RoleKind::Token:
    case RoleKind::Bos:
    case RoleKind::Constant:
    case RoleKind::PositionCode:
    case RoleKind::Position:
    case RoleKind::LogRemaining:
    case RoleKind::BlockCode:
    case RoleKind::BlockStart:
    case RoleKind::LogRemainingInBlock:
    case RoleKind::LogRemainingBlocks:
      return 0;
    case RoleKind::LetterBack:
      return 1;
    case RoleKind::ScanPrefix:
    case RoleKind::ScanFetch:
    case RoleKind::ScanCompose:
      return 2;
    case RoleKind::Transition:
    case RoleKind::ResetFlag:
    case RoleKind::ResetValue:
      return 3;
    case RoleKind::GroupElement:
    case RoleKind::CounterIncrement:
    case RoleKind::CounterSum:
    case RoleKind::CounterWindowSum:
    case RoleKind::CounterBlockResidue:
    case RoleKind::CounterBlockSum:
    case RoleKind::CounterResidue:
      return 4;
    case RoleKind::Memory:
      return 5;
    case RoleKind::Coordinate:
    case RoleKind::PreviousCoordinate:
      return 6;
    case RoleKind::WalkSum:
    case RoleKind::WalkResidue:
    case RoleKind::LatestVisit:
    case RoleKind::Departure:
    case RoleKind::DepartureUp:
    case RoleKind::LatestDeparture:
      return 7;
    case RoleKind::LetterCode:
    case RoleKind::ContextualValue:
    case RoleKind::ValueThreshold:
      return 8;
    case RoleKind::ValueDecode:
    case RoleKind::Decode:
    case RoleKind::State:
      return 9;
    default:
      return 10;
  }
}

const char* colour_of(const Role& role) { return kFamilies[family_of(role.kind)].colour; }

// The lanes: the circuit file's residual subspaces, in order.
struct Lane {
  std::string name;
  Role role;
};

std::vector<int> lanes_named(const std::multimap<std::string, int>& index,
                             const nlohmann::json& names) {
  std::vector<int> out;
  if (!names.is_array()) return out;
  for (const auto& n : names) {
    auto [begin, end] = index.equal_range(n.get<std::string>());
    for (auto it = begin; it != end; ++it) out.push_back(it->second);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// One column of lanes (the residual stream at one point): a table of ports l0, l1, ...
std::string stream_node(const std::string& id, const std::vector<Lane>& lanes, bool named,
                        const std::string& title) {
  std::ostringstream out;
  out << id
      << " [shape=plaintext, style=\"\", label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" "
         "CELLSPACING=\"0\" "
      << "CELLPADDING=\"2\"><TR><TD BORDER=\"0\"><FONT POINT-SIZE=\"8\">" << html(title)
      << "</FONT></TD></TR>";
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    // An ID on every cell with a tooltip: else Graphviz numbers its anchors by a counter that
    // lives as long as the process, and a second picture would differ from the first.
    out << "<TR><TD PORT=\"l" << i << "\" ID=\"" << id << "_l" << i << "\" BGCOLOR=\""
        << colour_of(lanes[i].role) << "\" TITLE=\"" << html(lanes[i].name)
        << "\" HREF=\"#\"><FONT POINT-SIZE=\"8\">"
        << (named ? html(lanes[i].name) : std::to_string(i)) << "</FONT></TD></TR>";
  }
  out << "</TABLE>>];\n";
  return out.str();
}

// Which levels of the cascade each layer holds, "level 2: layers 3-5" lines.
std::string level_lines(const Network& net) {
  std::map<int, std::set<int>> layers_of;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    for (const auto& h : net.layers[l].heads)
      if (h.role.level > 0) layers_of[h.role.level].insert(static_cast<int>(l));
    if (net.layers[l].mlp)
      for (const auto& b : net.layers[l].mlp->blocks)
        if (b.role.level > 0) layers_of[b.role.level].insert(static_cast<int>(l));
  }
  std::string out;
  for (const auto& [level, layers] : layers_of) {
    out += "level " + std::to_string(level) + ": layer" + (layers.size() > 1 ? "s " : " ");
    std::string list;
    for (int l : layers) list += (list.empty() ? "" : ", ") + std::to_string(l);
    out += list + "\n";
  }
  return out;
}

std::string legend_node(const Network& net, bool with_ports) {
  std::set<int> used;
  for (const auto& layer : net.layers) {
    for (const auto& h : layer.heads) used.insert(family_of(h.role.kind));
    if (layer.mlp)
      for (const auto& b : layer.mlp->blocks) used.insert(family_of(b.role.kind));
  }
  for (const auto& s : net.subspaces) used.insert(family_of(s.role.kind));
  std::ostringstream out;
  out << "legend [shape=plaintext, style=\"\", label=<<TABLE BORDER=\"1\" CELLBORDER=\"0\" "
         "CELLSPACING=\"1\" CELLPADDING=\"2\"><TR><TD COLSPAN=\"2\"><B>roles</B></TD></TR>";
  for (int f : used)
    out << "<TR><TD BGCOLOR=\"" << kFamilies[f].colour
        << "\" WIDTH=\"14\"> </TD><TD ALIGN=\"LEFT\">" << html(kFamilies[f].name) << "</TD></TR>";
  if (with_ports)
    out << "<TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\"><FONT COLOR=\"#3182bd\">q read</FONT>  "
           "<FONT COLOR=\"#31a354\">k read</FONT>  <FONT COLOR=\"#e6550d\">v read</FONT>  "
           "<FONT COLOR=\"#636363\">MLP read</FONT>  write</TD></TR>";
  const std::string levels = level_lines(net);
  if (!levels.empty())
    out << "<TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\"><B>cascade</B><BR ALIGN=\"LEFT\"/>"
        << html(levels.substr(0, levels.size() - 1)) << "<BR ALIGN=\"LEFT\"/></TD></TR>";
  out << "</TABLE>>];\n";
  return out.str();
}

std::string title_of(const Network& net) {
  std::string name =
      net.automaton.is_object() ? net.automaton.value("name", std::string("network")) : "network";
  std::string strategy = net.compiler.is_object() && net.compiler.contains("strategy") &&
                                 net.compiler["strategy"].is_string()
                             ? net.compiler["strategy"].get<std::string>()
                             : std::string("?");
  const NetworkSize size = net.size();
  return name + " (" + strategy + "): " + std::to_string(size.layers) + " layers, " +
         std::to_string(size.heads) + " heads, d_model " + std::to_string(size.d_model) +
         ", max_len " + std::to_string(net.max_len);
}

void check_size(const Network& net) {
  long long boxes = 0;
  for (const auto& layer : net.layers) boxes += static_cast<long long>(layer.heads.size()) + 1;
  if (boxes > kMaxDrawnBoxes)
    throw LimitError("the network has " + std::to_string(boxes) +
                     " heads and MLP blocks; krc draws at most " + std::to_string(kMaxDrawnBoxes));
}

const char* kGraphHeader =
    "  graph [rankdir=LR, newrank=true, fontname=\"Helvetica\", fontsize=12, nodesep=0.12, "
    "ranksep=0.3, "
    "labelloc=t, labeljust=l];\n"
    "  node [fontname=\"Helvetica\", fontsize=9, shape=box, style=\"filled,rounded\", "
    "penwidth=0.8];\n"
    "  edge [arrowsize=0.4, penwidth=0.6];\n";

// Graphviz's default ID discipline makes a named object's ID the address of its interned name,
// and orders subgraphs (the layer frames) by ID: the layout then depends on the heap's layout,
// so one graph drew differently in two processes. This discipline numbers names in the order
// they are first seen (even IDs; anonymous objects get odd ones, as by default), so the same
// DOT text gives the same bytes in every process, from both doors.
struct NameTable {
  std::map<std::string, IDTYPE> ids;
  std::vector<std::unique_ptr<std::string>> names;  // stable storage: print returns c_str()
  IDTYPE next_anonymous = 1;
};

Agiddisc_t sequential_ids = {
    [](Agraph_t*, Agdisc_t*) -> void* { return new NameTable; },
    [](void* state, int, char* name, IDTYPE* id, int create) -> long {
      auto& table = *static_cast<NameTable*>(state);
      if (!name) {
        *id = table.next_anonymous;
        table.next_anonymous += 2;
        return 1;
      }
      auto it = table.ids.find(name);
      if (it != table.ids.end()) {
        *id = it->second;
        return 1;
      }
      if (!create) {
        *id = 0;
        return 1;
      }
      table.names.push_back(std::make_unique<std::string>(name));
      *id = 2 * static_cast<IDTYPE>(table.names.size());
      table.ids.emplace(name, *id);
      return 1;
    },
    [](void*, int, IDTYPE) -> long { return 0; },
    [](void*, int, IDTYPE) {},
    [](void* state, int, IDTYPE id) -> char* {
      auto& table = *static_cast<NameTable*>(state);
      if (id % 2 != 0 || id == 0 || id / 2 > table.names.size()) return nullptr;
      return table.names[id / 2 - 1]->data();
    },
    [](void* state) { delete static_cast<NameTable*>(state); },
    [](void*, int, void*) {},
};

// The DOT text read a line at a time, as agmemread reads it (the lexer counts lines).
struct TextChannel {
  const std::string* text;
  std::size_t position = 0;
};

Agiodisc_t text_io = {[](void* chan, char* buffer, int size) -> int {
                        auto& c = *static_cast<TextChannel*>(chan);
                        int n = 0;
                        while (n + 1 < size && c.position < c.text->size()) {
                          const char ch = (*c.text)[c.position++];
                          buffer[n++] = ch;
                          if (ch == '\n') break;
                        }
                        return n;
                      },
                      AgIoDisc.putstr, AgIoDisc.flush};

// gvRenderData's length is an unsigned int* in Graphviz 2.x and a size_t* from 3.0 on.
template <class Length>
int render_data(int (*render)(GVC_t*, graph_t*, const char*, char**, Length*), GVC_t* gvc,
                graph_t* graph, const char* format, char** data, std::string& out) {
  Length length = 0;
  const int status = render(gvc, graph, format, data, &length);
  if (status == 0 && *data) out.assign(*data, length);
  return status;
}

}  // namespace

DrawFormat draw_format_from_path(const std::string& path) {
  const auto dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == "svg") return DrawFormat::Svg;
  if (ext == "png") return DrawFormat::Png;
  if (ext == "dot" || ext == "gv") return DrawFormat::Dot;
  throw InputError(path, "", "the picture's format comes from the extension: .svg, .png or .dot");
}

const char* to_string(DrawFormat format) {
  switch (format) {
    case DrawFormat::Dot:
      return "dot";
    case DrawFormat::Svg:
      return "svg";
    case DrawFormat::Png:
      return "png";
  }
  return "?";
}

std::string network_dot(const Network& net) {
  check_size(net);
  const nlohmann::json circuit = circuit_json(net, CircuitGranularity::Head);
  std::vector<Lane> lanes;
  for (const auto& s : circuit["residual_subspaces"])
    lanes.push_back({s["name"].get<std::string>(), role_from_json(s["role"])});
  if (lanes.size() > static_cast<std::size_t>(kMaxDrawnLanes))
    throw LimitError("the network has " + std::to_string(lanes.size()) +
                     " residual subspaces; krc draws at most " + std::to_string(kMaxDrawnLanes));
  std::multimap<std::string, int> index;
  for (std::size_t i = 0; i < lanes.size(); ++i) index.emplace(lanes[i].name, static_cast<int>(i));
  const auto& nodes = circuit["nodes"];

  std::ostringstream out;
  out << "digraph krc {\n" << kGraphHeader;
  out << "  label=" << quoted(title_of(net)) << ";\n";
  out << "  " << legend_node(net, true);

  // The stream columns: s0 after the embeddings, then after every sublayer.
  int streams = 0;
  std::string previous_stream;
  auto new_stream = [&](const std::string& title, bool named) {
    const std::string id = "s" + std::to_string(streams++);
    out << "  " << stream_node(id, lanes, named, title);
    if (!previous_stream.empty())
      out << "  " << previous_stream << " -> " << id << " [style=invis, weight=20];\n";
    previous_stream = id;
    return id;
  };
  auto reads = [&](const std::string& from, const std::string& node, const nlohmann::json& names,
                   const char* colour) {
    for (int lane : lanes_named(index, names))
      out << "  " << from << ":l" << lane << " -> " << quoted(node) << " [color=\"" << colour
          << "\"];\n";
  };
  auto writes = [&](const std::string& node, const std::string& to, const nlohmann::json& names) {
    for (int lane : lanes_named(index, names))
      out << "  " << quoted(node) << " -> " << to << ":l" << lane << " [color=\"#252525\"];\n";
  };

  out << "  input [label=\"input\\ntoken + position\\nembeddings\", fillcolor=\""
      << kFamilies[0].colour << "\"];\n";
  std::string stream = new_stream("residual after the embeddings", true);
  writes("input", stream, nodes["input"]["writes"]);
  // A layer's frame holds its heads, the stream between its attention and its MLP, and the
  // MLP, so every read runs forward (left to right).
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const Layer& layer = net.layers[l];
    const std::string L = std::to_string(l);
    const bool last = l + 1 == net.layers.size();
    out << "  subgraph cluster_layer" << L
        << " {\n    label=" << quoted("layer " + L + ": " + layer.purpose)
        << "; style=\"rounded\"; color=\"#999999\"; fontsize=10;\n";
    for (std::size_t h = 0; h < layer.heads.size(); ++h) {
      const AttentionHead& head = layer.heads[h];
      const std::string name = "a" + L + ".h" + std::to_string(h);
      out << "    " << quoted(name)
          << " [label=" << quoted(name + " (" + to_string(head.kind) + ")\n" + describe(head.role))
          << ", fillcolor=\"" << colour_of(head.role) << "\", tooltip=" << quoted(head.name)
          << (head.kind == HeadKind::Average ? ", style=\"filled,rounded,dashed\"" : "") << "];\n";
    }
    const std::string before_heads = stream;
    if (!layer.heads.empty() && layer.mlp) stream = new_stream("after a" + L, false);
    if (layer.mlp) {
      const std::string name = "m" + L;
      out << "    " << quoted(name) << " [shape=plaintext, style=\"\", label=<<TABLE BORDER=\"1\" "
          << "CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"2\" STYLE=\"ROUNDED\"><TR><TD><B>"
          << name << "</B> (MLP, " << layer.mlp->hidden() << " hidden)</TD></TR>";
      const auto& blocks = layer.mlp->blocks;
      const std::size_t shown = std::min<std::size_t>(blocks.size(), 12);
      for (std::size_t b = 0; b < shown; ++b)
        out << "<TR><TD BGCOLOR=\"" << colour_of(blocks[b].role) << "\">"
            << html(describe(blocks[b].role)) << " (" << blocks[b].count << ")</TD></TR>";
      if (blocks.size() > shown)
        out << "<TR><TD>and " << blocks.size() - shown << " more blocks</TD></TR>";
      out << "</TABLE>>];\n";
    }
    out << "  }\n";
    const std::string before_mlp = stream;
    if (!layer.heads.empty() || layer.mlp) stream = new_stream("residual after layer " + L, last);
    const std::string after_heads = layer.mlp ? before_mlp : stream;
    for (std::size_t h = 0; h < layer.heads.size(); ++h) {
      const std::string name = "a" + L + ".h" + std::to_string(h);
      const auto& node = nodes[name];
      reads(before_heads, name, node.value("reads_q", nlohmann::json::array()), "#3182bd");
      reads(before_heads, name, node.value("reads_k", nlohmann::json::array()), "#31a354");
      reads(before_heads, name, node.value("reads_v", nlohmann::json::array()), "#e6550d");
      writes(name, after_heads, node["writes"]);
    }
    if (layer.mlp) {
      const std::string name = "m" + L;
      reads(before_mlp, name, nodes[name].value("reads", nlohmann::json::array()), "#636363");
      writes(name, stream, nodes[name]["writes"]);
    }
  }
  out << "  logits [label=\"logits\\none per state\", fillcolor=\"" << kFamilies[9].colour
      << "\"];\n";
  reads(stream, "logits", nodes["logits"]["reads"], "#636363");
  out << "}\n";
  return out.str();
}

std::vector<Eigen::MatrixXd> attention_patterns(const Network& net,
                                                const std::vector<LetterId>& word,
                                                std::vector<StateId>* states) {
  using Matrix = Eigen::MatrixXd;
  const int rows = static_cast<int>(word.size()) + 1;
  if (static_cast<int>(word.size()) > net.max_len)
    throw std::invalid_argument("the word is longer than the network's max_len");
  Matrix x(rows, net.d_model());
  for (int t = 0; t < rows; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    if (token >= net.token_embedding.rows())
      throw std::invalid_argument("a letter outside the network's vocabulary");
    x.row(t) = (net.token_embedding.row(token) + net.position_embedding.row(t)).cast<double>();
  }
  std::vector<Matrix> patterns;
  for (const Layer& layer : net.layers) {
    Matrix delta = Matrix::Zero(rows, net.d_model());
    for (const AttentionHead& head : layer.heads) {
      const Matrix q = x * head.query.cast<double>();
      const Matrix k = x * head.key.cast<double>();
      const Matrix v = x * head.value.cast<double>();
      Matrix p = Matrix::Zero(rows, rows);
      for (int t = 0; t < rows; ++t) {
        Eigen::VectorXd score(t + 1);
        for (int j = 0; j <= t; ++j) score[j] = net.attention_scale * q.row(t).dot(k.row(j));
        const double top = score.maxCoeff();
        const bool argmax = net.attention == AttentionKind::Hard && head.kind == HeadKind::Select;
        if (argmax) {
          int best = 0;
          for (int j = 1; j <= t; ++j)
            if (score[j] >= score[best]) best = j;  // ties to the latest position
          p(t, best) = 1.0;
        } else if (net.attention == AttentionKind::Hardmax) {
          int ties = 0;
          for (int j = 0; j <= t; ++j) ties += score[j] == top;
          for (int j = 0; j <= t; ++j) p(t, j) = score[j] == top ? 1.0 / ties : 0.0;
        } else {
          const Eigen::VectorXd w = (score.array() - top).exp();
          p.row(t).head(t + 1) = (w / w.sum()).transpose();
        }
      }
      delta += Matrix(p * v) * head.output.cast<double>();
      patterns.push_back(std::move(p));
    }
    x += delta;
    if (layer.mlp) {
      const Mlp& mlp = *layer.mlp;
      Matrix hidden = x * mlp.in_weight.cast<double>().transpose();
      hidden.rowwise() += mlp.in_bias.cast<double>().transpose();
      hidden = hidden.cwiseMax(0.0);
      Matrix add = hidden * mlp.out_weight.cast<double>().transpose();
      add.rowwise() += mlp.out_bias.cast<double>().transpose();
      x += add;
    }
  }
  if (states) {
    const Matrix logits = x * net.unembedding.cast<double>();
    states->clear();
    for (int t = 0; t < rows; ++t) {
      Eigen::Index best = 0;
      logits.row(t).maxCoeff(&best);
      states->push_back(static_cast<StateId>(best));
    }
  }
  return patterns;
}

std::string attention_dot(const Network& net, const std::vector<LetterId>& word) {
  check_size(net);
  long long heads = 0;
  for (const auto& layer : net.layers) heads += static_cast<long long>(layer.heads.size());
  const long long positions = static_cast<long long>(word.size()) + 1;
  if (static_cast<int>(word.size()) > kMaxAttentionLetters ||
      heads * positions * positions > kMaxAttentionCells)
    throw LimitError("an attention picture of " + std::to_string(heads) + " heads on " +
                     std::to_string(word.size()) + " letters is too large (at most " +
                     std::to_string(kMaxAttentionLetters) + " letters and " +
                     std::to_string(kMaxAttentionCells) + " cells); draw a shorter word");
  // The pass keeps the weights sparse: its dense values are [positions, d_model or hidden].
  std::vector<StateId> states;
  const std::vector<Eigen::MatrixXd> patterns = attention_patterns(net, word, &states);
  std::vector<std::string> token{"&lt;bos&gt;"};
  for (LetterId l : word) token.push_back(html(net.vocabulary.at(l + 1)));
  std::string state_text;
  for (StateId s : states) state_text += (state_text.empty() ? "" : " ") + net.states.at(s);
  std::string word_text;
  for (LetterId l : word) word_text += (word_text.empty() ? "" : " ") + net.vocabulary.at(l + 1);

  std::ostringstream out;
  out << "digraph krc_attention {\n" << kGraphHeader;
  out << "  label="
      << quoted(title_of(net) + "\nattention (" + to_string(net.attention) + ", float64) on \"" +
                word_text + "\"; states after each prefix: " + state_text)
      << ";\n";
  out << "  " << legend_node(net, false);
  std::size_t p = 0;
  std::string previous;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const Layer& layer = net.layers[l];
    if (layer.heads.empty()) continue;
    const std::string L = std::to_string(l);
    out << "  subgraph cluster_layer" << L
        << " {\n    label=" << quoted("layer " + L + ": " + layer.purpose)
        << "; style=\"rounded\"; color=\"#999999\"; fontsize=10;\n";
    std::string first_here;
    for (std::size_t h = 0; h < layer.heads.size(); ++h, ++p) {
      const AttentionHead& head = layer.heads[h];
      const std::string name = "a" + L + ".h" + std::to_string(h);
      const Eigen::MatrixXd& w = patterns[p];
      out << "    " << quoted(name) << " [shape=plaintext, style=\"\", label=<<TABLE BORDER=\"0\" "
          << "CELLBORDER=\"0\" CELLSPACING=\"1\" CELLPADDING=\"1\"><TR><TD COLSPAN=\""
          << positions + 1 << "\" BGCOLOR=\"" << colour_of(head.role) << "\"><B>" << name << "</B> "
          << html(describe(head.role)) << " (" << to_string(head.kind)
          << ")</TD></TR><TR><TD></TD>";
      for (long long j = 0; j < positions; ++j)
        out << "<TD><FONT POINT-SIZE=\"7\">" << token[j] << "</FONT></TD>";
      out << "</TR>";
      for (long long t = 0; t < positions; ++t) {
        out << "<TR><TD ALIGN=\"RIGHT\"><FONT POINT-SIZE=\"7\">" << token[t] << "</FONT></TD>";
        for (long long j = 0; j < positions; ++j) {
          const double v = j <= t ? std::clamp(w(t, j), 0.0, 1.0) : 0.0;
          // White to dark blue by weight; positions after the query are blank.
          const int r = static_cast<int>(std::lround(255 - v * (255 - 8)));
          const int g = static_cast<int>(std::lround(255 - v * (255 - 48)));
          const int b = static_cast<int>(std::lround(255 - v * (255 - 107)));
          char colour[8];
          std::snprintf(colour, sizeof colour, "#%02x%02x%02x", r, g, b);
          char title[96];
          std::snprintf(title, sizeof title, "%s q=%lld k=%lld w=%.17g", name.c_str(), t, j,
                        j <= t ? w(t, j) : 0.0);
          out << "<TD WIDTH=\"12\" HEIGHT=\"12\" FIXEDSIZE=\"TRUE\" BGCOLOR=\""
              << (j <= t ? colour : "#f4f4f4") << "\" ID=\"" << name << "_q" << t << "_k" << j
              << "\" TITLE=\"" << title << "\" HREF=\"#\"></TD>";
        }
        out << "</TR>";
      }
      out << "</TABLE>>];\n";
      if (first_here.empty()) first_here = name;
    }
    out << "  }\n";
    if (!previous.empty())
      out << "  " << quoted(previous) << " -> " << quoted(first_here) << " [style=invis];\n";
    previous = first_here;
  }
  out << "}\n";
  return out.str();
}

std::string render_dot(const std::string& dot, DrawFormat format) {
  if (format == DrawFormat::Dot) return dot;
  // Graphviz reports through agerr: collect its messages instead of printing them.
  static thread_local std::string messages;
  messages.clear();
  agseterrf([](char* text) -> int {
    messages += text;
    return 0;
  });
  agseterr(AGERR);
  std::unique_ptr<GVC_t, int (*)(GVC_t*)> gvc(gvContext(), gvFreeContext);
  if (!gvc) throw LimitError("Graphviz could not start (gvContext)");
  Agdisc_t discipline = {&AgMemDisc, &sequential_ids, &text_io};
  TextChannel channel{&dot};
  std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> graph(agread(&channel, &discipline), agclose);
  if (!graph) throw LimitError("Graphviz refused the picture's DOT text: " + messages);
  if (gvLayout(gvc.get(), graph.get(), "dot") != 0)
    throw LimitError("Graphviz could not lay out the picture: " + messages);
  char* data = nullptr;
  std::string out;
  const int rendered =
      render_data(gvRenderData, gvc.get(), graph.get(), to_string(format), &data, out);
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc.get(), graph.get());
  if (rendered != 0 || out.empty())
    throw LimitError(std::string("Graphviz could not render ") + to_string(format) +
                     " (is its plugin installed? Debian: graphviz): " + messages);
  return out;
}

}  // namespace krc
