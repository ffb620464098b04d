#include "network_drawing.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "dot_parts.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/runtime/circuit.hpp"

namespace krc {

using namespace draw_detail;

namespace {

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

namespace {

// The network picture being written: the lanes, the stream columns so far, and the DOT text.
// s0 is the stream after the embeddings, then one after every sublayer.
class NetworkDot {
 public:
  explicit NetworkDot(const nlohmann::json& circuit) {
    for (const auto& s : circuit["residual_subspaces"])
      lanes_.push_back({s["name"].get<std::string>(), role_from_json(s["role"])});
    if (lanes_.size() > static_cast<std::size_t>(kMaxDrawnLanes))
      throw LimitError("the network has " + std::to_string(lanes_.size()) +
                       " residual subspaces; krc draws at most " + std::to_string(kMaxDrawnLanes));
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      index_.emplace(lanes_[i].name, static_cast<int>(i));
  }

  std::ostringstream out;

  std::string new_stream(const std::string& title, bool named) {
    const std::string id = "s" + std::to_string(streams_++);
    out << "  " << stream_node(id, lanes_, named, title);
    if (!previous_.empty())
      out << "  " << previous_ << " -> " << id << " [style=invis, weight=20];\n";
    previous_ = id;
    return id;
  }
  void reads(const std::string& from, const std::string& node, const nlohmann::json& names,
             const char* colour) {
    for (int lane : lanes_named(index_, names))
      out << "  " << from << ":l" << lane << " -> " << quoted(node) << " [color=\"" << colour
          << "\"];\n";
  }
  void writes(const std::string& node, const std::string& to, const nlohmann::json& names) {
    for (int lane : lanes_named(index_, names))
      out << "  " << quoted(node) << " -> " << to << ":l" << lane << " [color=\"#252525\"];\n";
  }

 private:
  std::vector<Lane> lanes_;
  std::multimap<std::string, int> index_;
  int streams_ = 0;
  std::string previous_;
};

void head_boxes(std::ostream& out, const Layer& layer, const std::string& L) {
  for (std::size_t h = 0; h < layer.heads.size(); ++h) {
    const AttentionHead& head = layer.heads[h];
    const std::string name = "a" + L + ".h" + std::to_string(h);
    out << "    " << quoted(name)
        << " [label=" << quoted(name + " (" + to_string(head.kind) + ")\n" + describe(head.role))
        << ", fillcolor=\"" << colour_of(head.role) << "\", tooltip=" << quoted(head.name)
        << (head.kind == HeadKind::Average ? ", style=\"filled,rounded,dashed\"" : "") << "];\n";
  }
}

// The MLP's box lists its blocks (the first 12) by role.
void mlp_box(std::ostream& out, const Mlp& mlp, const std::string& L) {
  out << "    " << quoted("m" + L) << " [shape=plaintext, style=\"\", label=<<TABLE BORDER=\"1\" "
      << "CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"2\" STYLE=\"ROUNDED\"><TR><TD><B>m" << L
      << "</B> (MLP, " << mlp.hidden() << " hidden)</TD></TR>";
  const std::size_t shown = std::min<std::size_t>(mlp.blocks.size(), 12);
  for (std::size_t b = 0; b < shown; ++b)
    out << "<TR><TD BGCOLOR=\"" << colour_of(mlp.blocks[b].role) << "\">"
        << html(describe(mlp.blocks[b].role)) << " (" << mlp.blocks[b].count << ")</TD></TR>";
  if (mlp.blocks.size() > shown)
    out << "<TR><TD>and " << mlp.blocks.size() - shown << " more blocks</TD></TR>";
  out << "</TABLE>>];\n";
}

// One layer: its frame (heads, the stream between attention and MLP, the MLP), then the reads
// and writes, so every read runs forward (left to right). Returns the stream after the layer.
std::string layer_dot(NetworkDot& d, const Network& net, std::size_t l, std::string stream,
                      const nlohmann::json& nodes) {
  const Layer& layer = net.layers[l];
  const std::string L = std::to_string(l);
  d.out << "  subgraph cluster_layer" << L
        << " {\n    label=" << quoted("layer " + L + ": " + layer.purpose)
        << "; style=\"rounded\"; color=\"#999999\"; fontsize=10;\n";
  head_boxes(d.out, layer, L);
  const std::string before_heads = stream;
  if (!layer.heads.empty() && layer.mlp) stream = d.new_stream("after a" + L, false);
  if (layer.mlp) mlp_box(d.out, *layer.mlp, L);
  d.out << "  }\n";
  const std::string before_mlp = stream;
  if (!layer.heads.empty() || layer.mlp)
    stream = d.new_stream("residual after layer " + L, l + 1 == net.layers.size());
  const std::string after_heads = layer.mlp ? before_mlp : stream;
  for (std::size_t h = 0; h < layer.heads.size(); ++h) {
    const std::string name = "a" + L + ".h" + std::to_string(h);
    const auto& node = nodes[name];
    d.reads(before_heads, name, node.value("reads_q", nlohmann::json::array()), "#3182bd");
    d.reads(before_heads, name, node.value("reads_k", nlohmann::json::array()), "#31a354");
    d.reads(before_heads, name, node.value("reads_v", nlohmann::json::array()), "#e6550d");
    d.writes(name, after_heads, node["writes"]);
  }
  if (layer.mlp) {
    d.reads(before_mlp, "m" + L, nodes["m" + L].value("reads", nlohmann::json::array()), "#636363");
    d.writes("m" + L, stream, nodes["m" + L]["writes"]);
  }
  return stream;
}

}  // namespace

std::string network_dot(const Network& net) {
  check_size(net);
  const nlohmann::json circuit = circuit_json(net, CircuitGranularity::Head);
  const auto& nodes = circuit["nodes"];
  NetworkDot d(circuit);
  d.out << "digraph krc {\n" << kGraphHeader;
  d.out << "  label=" << quoted(title_of(net)) << ";\n";
  d.out << "  " << legend_node(net, true);
  d.out << "  input [label=\"input\\ntoken + position\\nembeddings\", fillcolor=\""
        << colour_of(Role{RoleKind::Token}) << "\"];\n";
  std::string stream = d.new_stream("residual after the embeddings", true);
  d.writes("input", stream, nodes["input"]["writes"]);
  for (std::size_t l = 0; l < net.layers.size(); ++l) stream = layer_dot(d, net, l, stream, nodes);
  d.out << "  logits [label=\"logits\\none per state\", fillcolor=\""
        << colour_of(Role{RoleKind::State}) << "\"];\n";
  d.reads(stream, "logits", nodes["logits"]["reads"], "#636363");
  d.out << "}\n";
  return d.out.str();
}

}  // namespace krc
