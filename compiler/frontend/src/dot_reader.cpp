#include "krc/dot_reader.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "dot_scanner.hpp"
#include "krc/input_error.hpp"
#include "source_lines.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

struct DotNode {
  std::string id, label, shape;
};
struct DotEdge {
  std::string label;
};
using DotGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, DotNode, DotEdge>;
using DotEdgeId = DotGraph::edge_descriptor;

// read_graphviz keeps no global edge order, and transitions' order (letters in order of first
// appearance, the line of the k-th edge) needs it. Every edge gets a default attribute (an
// `edge [...]` statement added after the opening brace); Boost sets edges' attributes in file
// order, so this property map, written once per edge, records that order.
constexpr const char* kOrderAttribute = "krc_edge_order";

struct EdgeOrderRecorder {
  std::vector<DotEdgeId>* order;
};
void put(const EdgeOrderRecorder& recorder, const DotEdgeId& edge, const std::string&) {
  recorder.order->push_back(edge);
}
std::string get(const EdgeOrderRecorder&, const DotEdgeId&) { return {}; }

}  // namespace
}  // namespace krc

namespace boost {
template <>
struct property_traits<krc::EdgeOrderRecorder> {
  using key_type = krc::DotEdgeId;
  using value_type = std::string;
  using reference = std::string;
  using category = writable_property_map_tag;
};
}  // namespace boost

namespace krc {

namespace {

using frontend::DotToken;
using frontend::line_place;

struct ParsedDot {
  DotGraph graph;
  std::vector<DotEdgeId> edges_in_order;
};

// Parses with Boost into `parsed` (in place: edge descriptors point into the graph, so it must
// not be copied afterwards); throws whatever read_graphviz throws.
void parse_with_boost(const std::string& text, const std::vector<DotToken>& tokens,
                      ParsedDot& parsed) {
  std::string marked = text;
  auto brace = std::find_if(tokens.begin(), tokens.end(), [](const DotToken& t) {
    return t.kind == DotToken::Punct && t.text == "{";
  });
  // Inserted on the brace's line, so line numbers stay right.
  if (brace != tokens.end())
    marked.insert(brace->offset + 1, std::string(" edge [") + kOrderAttribute + "=\"\"]; ");
  boost::dynamic_properties properties(boost::ignore_other_properties);
  properties.property("node_id", boost::get(&DotNode::id, parsed.graph));
  properties.property("label", boost::get(&DotNode::label, parsed.graph));
  properties.property("shape", boost::get(&DotNode::shape, parsed.graph));
  properties.property("label", boost::get(&DotEdge::label, parsed.graph));
  properties.property(kOrderAttribute, EdgeOrderRecorder{&parsed.edges_in_order});
  boost::read_graphviz(marked, parsed.graph, properties, "node_id");
}

std::optional<std::string> syntax_error(const std::string& text) {
  try {
    DotGraph graph;
    boost::dynamic_properties properties(boost::ignore_other_properties);
    properties.property("node_id", boost::get(&DotNode::id, graph));
    boost::read_graphviz(text, graph, properties, "node_id");
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

// Boost's messages carry no position. Parsing stops at the first bad token, so a prefix of
// the file that ends after that token fails with the same message, and a shorter one only
// with an end-of-file complaint: the first line whose prefix reproduces the message is the
// line of the error. End-of-file errors belong to the last line.
std::size_t locate_syntax_error(const std::string& text, const std::string& message) {
  std::vector<std::size_t> line_ends;  // offset just past each line
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_ends.push_back(i + 1);
  if (line_ends.empty() || line_ends.back() != text.size()) line_ends.push_back(text.size());
  std::size_t last_line = line_ends.size();
  while (last_line > 1 &&
         text.find_first_not_of(" \t\r\n", line_ends[last_line - 2]) >= line_ends[last_line - 1])
    --last_line;  // skip trailing blank lines
  if (message.find("<eof>") != std::string::npos) return last_line;
  std::size_t lo = 1, hi = line_ends.size();
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (syntax_error(text.substr(0, line_ends[mid - 1])) == message)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

std::string trim(const std::string& s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// "a / x" and "a/x" (Mealy machines) read the input a.
std::string input_letter(const std::string& label) {
  return trim(label.substr(0, label.find('/')));
}

bool is_start_marker(const DotNode& node) { return node.id.rfind("__start", 0) == 0; }

std::string lowercase(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Automaton read_dot_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  std::vector<DotToken> tokens = frontend::scan_dot(text);

  ParsedDot parsed;
  try {
    parse_with_boost(text, tokens, parsed);
  } catch (const boost::undirected_graph_error&) {
    auto keyword = std::find_if(tokens.begin(), tokens.end(), [](const DotToken& t) {
      return t.kind == DotToken::Id && lowercase(t.text) == "graph";
    });
    b.fail(line_place(keyword == tokens.end() ? 1 : keyword->line),
           "an undirected graph ('graph' with '--' edges); an automaton is a 'digraph'");
  } catch (const std::exception& e) {
    std::string message = e.what();
    b.fail(line_place(locate_syntax_error(text, message)), "not valid Graphviz DOT: " + message);
  }
  const DotGraph& g = parsed.graph;

  // Where each node is first mentioned, and the line of each edge operator: the k-th edge in
  // file order is the k-th arrow, unless a statement makes several edges at once (then edges
  // are named by their endpoints instead of a line).
  std::map<std::string, const DotToken*> first_mention = frontend::first_node_mentions(tokens);
  std::vector<std::size_t> arrow_lines;
  for (const auto& t : tokens)
    if (t.kind == DotToken::EdgeOp) arrow_lines.push_back(t.line);
  const bool arrows_match = arrow_lines.size() == parsed.edges_in_order.size();
  auto edge_place = [&](std::size_t k, const DotEdgeId& e) {
    if (arrows_match) return line_place(arrow_lines[k]);
    return "edge '" + g[boost::source(e, g)].id + "' -> '" + g[boost::target(e, g)].id + "'";
  };
  auto node_place = [&](const DotNode& node) {
    auto it = first_mention.find(node.id);
    return it == first_mention.end() ? "node '" + node.id + "'" : line_place(it->second->line);
  };

  // States: every node but the start markers, in order of first mention.
  std::vector<std::size_t> state_vertices;
  for (std::size_t v = 0; v < boost::num_vertices(g); ++v)
    if (!is_start_marker(g[v])) state_vertices.push_back(v);
  auto mention_rank = [&](std::size_t v) {
    auto it = first_mention.find(g[v].id);
    return it == first_mention.end() ? std::numeric_limits<std::size_t>::max() : it->second->index;
  };
  std::stable_sort(state_vertices.begin(), state_vertices.end(),
                   [&](std::size_t x, std::size_t y) { return mention_rank(x) < mention_rank(y); });
  if (state_vertices.empty())
    b.fail("", "no states: the graph has no nodes besides the start marker");

  // Labels name the states when every state has one and no two share it (LearnLib labels
  // s0, s1, ... as 0, 1, ...); otherwise node ids do (they are unique by definition).
  std::set<std::string> labels;
  bool use_labels = true;
  for (std::size_t v : state_vertices) {
    const std::string& label = g[v].label;
    if (label.empty() || label == "\\N" || !labels.insert(label).second) use_labels = false;
  }
  std::vector<std::optional<StateId>> state_of(boost::num_vertices(g));
  for (std::size_t v : state_vertices) {
    const DotNode& node = g[v];
    const std::string& state_name = use_labels ? node.label : node.id;
    if (auto problem = frontend::invalid_utf8_problem(state_name, "state name"))
      b.fail(node_place(node), *problem);
    StateId q = b.add_state(state_name, node_place(node));
    state_of[v] = q;
    if (lowercase(node.shape) == "doublecircle") b.add_accepting(q);
  }

  bool has_initial = false;
  for (std::size_t k = 0; k < parsed.edges_in_order.size(); ++k) {
    const DotEdgeId& e = parsed.edges_in_order[k];
    const DotNode& from = g[boost::source(e, g)];
    const DotNode& to = g[boost::target(e, g)];
    std::string place = edge_place(k, e);
    if (is_start_marker(from)) {
      if (is_start_marker(to))
        b.fail(place, "an edge between two start markers ('" + from.id + "' -> '" + to.id + "')");
      b.set_initial(*state_of[boost::target(e, g)], place);
      has_initial = true;
      continue;
    }
    if (is_start_marker(to)) b.fail(place, "an edge into the start marker '" + to.id + "'");
    std::string letter = input_letter(g[e].label);
    if (letter.empty())
      b.fail(place, "the edge '" + from.id + "' -> '" + to.id +
                        "' has no label: which letter does it read?");
    if (auto problem = frontend::invalid_utf8_problem(letter, "letter")) b.fail(place, *problem);
    LetterId a = b.letter(letter, place);
    b.add_transition(*state_of[boost::source(e, g)], a, *state_of[boost::target(e, g)], place);
  }
  if (!has_initial)
    b.fail("",
           "no initial state: expected an edge from a start marker, as AALpy and LearnLib "
           "write it (__start0 -> s0)");
  return b.build(options);
}

}  // namespace krc
