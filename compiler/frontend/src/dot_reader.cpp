#include "krc/frontend/dot_reader.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "dot_guards.hpp"
#include "dot_labels.hpp"
#include "dot_refusals.hpp"
#include "dot_scanner.hpp"
#include "dot_syntax.hpp"
#include "flexfringe.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

struct DotNode {
  std::string id, label, shape, peripheries;
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

// What Boost reads: the text with the edge-order attribute after the first '{' (on its line,
// so line numbers stay right), "subgraph" written before anonymous subgraphs' braces (see
// dot_syntax.hpp), and every HTML string <...> rewritten as the quoted string
// "<...>" with '"' and '\' turned into HTML character references (which keep their meaning):
// Boost 1.74's lexer ends an HTML string at its first self-closing tag, so AALpy's labels
// <In<br />Out> do not parse as written. `html_values` gets the rewritten strings, which is
// how Boost will report those values.
std::string boost_input(const std::string& text, const std::vector<DotToken>& tokens,
                        const std::vector<std::size_t>& anonymous_subgraphs,
                        std::set<std::string>& html_values) {
  std::string out;
  out.reserve(text.size() + 64 + 9 * anonymous_subgraphs.size());
  std::size_t copied = 0;
  bool marked = false;
  auto anonymous = anonymous_subgraphs.begin();
  for (const auto& t : tokens) {
    if (anonymous != anonymous_subgraphs.end() && *anonymous == t.index) {
      out.append(text, copied, t.offset - copied);
      out += "subgraph ";
      copied = t.offset;
      ++anonymous;
    }
    if (!marked && t.kind == DotToken::Punct && t.text == "{") {
      out.append(text, copied, t.offset + 1 - copied);
      out += std::string(" edge [") + kOrderAttribute + "=\"\"]; ";
      copied = t.offset + 1;
      marked = true;
    }
    if (t.kind != DotToken::Id || t.form != DotToken::Html) continue;
    out.append(text, copied, t.offset - copied);
    std::string value;
    for (char c : t.text) value += c == '"' ? "&quot;" : c == '\\' ? "&#92;" : std::string(1, c);
    out += '"' + value + '"';
    html_values.insert(std::move(value));
    copied = t.offset + t.text.size();
  }
  out.append(text, copied, std::string::npos);
  return out;
}

// Parses with Boost into `parsed` (in place: edge descriptors point into the graph, so it must
// not be copied afterwards); throws whatever read_graphviz throws.
void parse_with_boost(const std::string& input, ParsedDot& parsed) {
  boost::dynamic_properties properties(boost::ignore_other_properties);
  properties.property("node_id", boost::get(&DotNode::id, parsed.graph));
  properties.property("label", boost::get(&DotNode::label, parsed.graph));
  properties.property("shape", boost::get(&DotNode::shape, parsed.graph));
  properties.property("peripheries", boost::get(&DotNode::peripheries, parsed.graph));
  properties.property("label", boost::get(&DotEdge::label, parsed.graph));
  properties.property(kOrderAttribute, EdgeOrderRecorder{&parsed.edges_in_order});
  boost::read_graphviz(input, parsed.graph, properties, "node_id");
}

bool is_start_marker_id(const std::string& id) { return id.rfind("__start", 0) == 0; }

// Start markers: AALpy's and LearnLib's __start0; FlexFringe's `I -> 0` and MONA's
// (LTLf2DFA's) `init -> 1` too, but only where that node is no state: no edge enters it and
// its one edge has no label (AALpy's Moore machines have a real state named I).
std::vector<bool> start_markers(const DotGraph& g) {
  const std::size_t n = boost::num_vertices(g);
  std::vector<std::size_t> in(n, 0), out(n, 0), labelled_out(n, 0);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    ++in[boost::target(*e, g)];
    ++out[boost::source(*e, g)];
    if (!g[*e].label.empty()) ++labelled_out[boost::source(*e, g)];
  }
  std::vector<bool> marker(n);
  for (std::size_t v = 0; v < n; ++v)
    marker[v] = is_start_marker_id(g[v].id) || ((g[v].id == "I" || g[v].id == "init") &&
                                                in[v] == 0 && out[v] == 1 && labelled_out[v] == 0);
  return marker;
}

// The reading in three steps over shared state: parse (grammar check, then Boost), states,
// transitions. Places: a node's first mention and the k-th arrow's line (the k-th edge in file
// order, unless a statement makes several edges at once: then edges are named by endpoints).
class DotAutomatonReader {
 public:
  DotAutomatonReader(AutomatonBuilder& b, const std::string& text)
      : b_(b), tokens_(frontend::scan_dot(text)) {
    parse(text);
    marker_ = start_markers(parsed_.graph);
    first_mention_ = frontend::first_node_mentions(tokens_);
    for (const auto& t : tokens_)
      if (t.kind == DotToken::EdgeOp) arrow_lines_.push_back(t.line);
  }

  void add_states();
  // Returns how the labels were read when they stand for sets of letters ("guards over 2
  // atomic propositions"), else "".
  std::string add_transitions();

 private:
  void parse(const std::string& text) {
    // Undirected first: the grammar check would otherwise complain about its '--' edges.
    std::size_t head = !tokens_.empty() && frontend::lowercase(tokens_[0].text) == "strict" ? 1 : 0;
    if (head < tokens_.size() && tokens_[head].form == DotToken::Bare &&
        frontend::lowercase(tokens_[head].text) == "graph")
      b_.fail(line_place(tokens_[head].line),
              "an undirected graph ('graph' with '--' edges); an automaton is a 'digraph'");
    const frontend::DotSyntax syntax = frontend::check_dot_syntax(tokens_);
    if (syntax.error)
      b_.fail(line_place(syntax.error->line), "not valid Graphviz DOT: " + syntax.error->problem);
    try {
      parse_with_boost(boost_input(text, tokens_, syntax.anonymous_subgraphs, html_), parsed_);
    } catch (const std::exception& e) {
      // The grammar check passed, so this is a difference between it and Boost: no line.
      b_.fail("", std::string("not valid Graphviz DOT: ") + e.what());
    }
  }

  std::string edge_place(std::size_t k, const DotEdgeId& e) const {
    const DotGraph& g = parsed_.graph;
    if (arrow_lines_.size() == parsed_.edges_in_order.size()) return line_place(arrow_lines_[k]);
    return "edge '" + g[boost::source(e, g)].id + "' -> '" + g[boost::target(e, g)].id + "'";
  }
  std::string node_place(const DotNode& node) const {
    auto it = first_mention_.find(node.id);
    return it == first_mention_.end() ? "node '" + node.id + "'" : line_place(it->second->line);
  }
  // An HTML label names its state by its text.
  std::string label_of(const DotNode& node) const {
    return html_.count(node.label) ? frontend::html_label_text(node.label) : node.label;
  }

  AutomatonBuilder& b_;
  std::vector<DotToken> tokens_;
  ParsedDot parsed_;
  std::set<std::string> html_;  // values written as HTML strings, as Boost reports them
  std::map<std::string, const DotToken*> first_mention_;
  std::vector<std::size_t> arrow_lines_;
  std::vector<std::optional<StateId>> state_of_;  // by vertex
  std::vector<bool> marker_;                      // by vertex: a start marker, no state
};

// States: every node but the start markers, in order of first mention. Labels name them when
// every state has one and no two share it (LearnLib labels s0, s1, ... as 0, 1, ...);
// otherwise node ids do (they are unique by definition).
void DotAutomatonReader::add_states() {
  const DotGraph& g = parsed_.graph;
  std::vector<std::size_t> state_vertices;
  for (std::size_t v = 0; v < boost::num_vertices(g); ++v)
    if (!marker_[v]) state_vertices.push_back(v);
  auto mention_rank = [&](std::size_t v) {
    auto it = first_mention_.find(g[v].id);
    return it == first_mention_.end() ? std::numeric_limits<std::size_t>::max() : it->second->index;
  };
  std::stable_sort(state_vertices.begin(), state_vertices.end(),
                   [&](std::size_t x, std::size_t y) { return mention_rank(x) < mention_rank(y); });
  if (state_vertices.empty())
    b_.fail("", "no states: the graph has no nodes besides the start marker");
  std::set<std::string> node_labels;
  bool use_labels = true, moore = true;  // Moore: every label is "name|output" or "name / output"
  for (std::size_t v : state_vertices) {
    const std::string label = label_of(g[v]);
    if (label.empty() || label == "\\N" || !node_labels.insert(label).second) use_labels = false;
    moore = moore && frontend::moore_label(label, g[v].shape).has_value();
  }
  std::set<std::string> moore_names;
  for (std::size_t v : state_vertices)
    if (moore &&
        !moore_names.insert(frontend::moore_label(label_of(g[v]), g[v].shape)->first).second)
      moore = false;  // names must stay distinct
  state_of_.assign(boost::num_vertices(g), std::nullopt);
  for (std::size_t v : state_vertices) {
    const DotNode& node = g[v];
    const auto moore_state =
        moore ? frontend::moore_label(label_of(node), node.shape) : std::nullopt;
    std::string state_name = moore_state  ? moore_state->first
                             : use_labels ? label_of(node)
                                          : node.id;
    if (state_name.empty()) state_name = "\"\"";  // node "" (an RPNI learner's empty prefix)
    if (auto problem = frontend::invalid_utf8_problem(state_name, "state name"))
      b_.fail(node_place(node), *problem);
    StateId q = b_.add_state(state_name, node_place(node));
    state_of_[v] = q;
    if (moore_state) b_.set_state_output(q, moore_state->second);
    // Accepting: a double circle, or two rings as Spot draws them (peripheries=2).
    const std::string rings = frontend::trim(node.peripheries);
    if (frontend::lowercase(node.shape) == "doublecircle" ||
        (!rings.empty() && rings.find_first_not_of("0123456789") == std::string::npos &&
         rings.size() < 4 && std::stoi(rings) >= 2))
      b_.add_accepting(q);
  }
}

// Transitions: every edge but the start marker's, in file order; each input of its label, or
// each letter its bit vectors or guard stands for; an edge without a label is an epsilon move.
std::string DotAutomatonReader::add_transitions() {
  const DotGraph& g = parsed_.graph;
  std::vector<DotEdgeId> edges;
  std::vector<std::string> labels, places;
  for (std::size_t k = 0; k < parsed_.edges_in_order.size(); ++k) {
    const DotEdgeId& e = parsed_.edges_in_order[k];
    const DotNode& from = g[boost::source(e, g)];
    const DotNode& to = g[boost::target(e, g)];
    std::string place = edge_place(k, e);
    if (marker_[boost::source(e, g)]) {
      if (marker_[boost::target(e, g)])
        b_.fail(place, "an edge between two start markers ('" + from.id + "' -> '" + to.id + "')");
      b_.add_initial(*state_of_[boost::target(e, g)], place);  // several: an NFA
      continue;
    }
    if (marker_[boost::target(e, g)])
      b_.fail(place, "an edge into the start marker '" + to.id + "'");
    edges.push_back(e);
    labels.push_back(g[e].label);
    places.push_back(std::move(place));
  }
  frontend::refuse_other_machines(b_, labels, places);
  auto unlabelled = [&](std::size_t i) {
    return html_.count(labels[i]) == 0 && frontend::trim(labels[i]).empty();
  };
  // FlexFringe's PAutomaC models: every label "symbol\ncount" reads as its symbol.
  std::string pautomac;
  {
    std::vector<std::string> symbols;
    for (std::size_t i = 0; i < labels.size() && !html_.count(labels[i]); ++i) {
      if (unlabelled(i)) continue;
      auto symbol = frontend::pautomac_symbol(labels[i]);
      if (!symbol) break;
      symbols.push_back(*symbol);
    }
    const auto labelled =
        static_cast<std::size_t>(std::count_if(labels.begin(), labels.end(), [&](const auto& l) {
          return html_.count(l) || !frontend::trim(l).empty();
        }));
    if (!symbols.empty() && symbols.size() == labelled) {
      for (std::size_t i = 0, k = 0; i < labels.size(); ++i)
        if (!unlabelled(i)) labels[i] = symbols[k++];
      pautomac =
          "FlexFringe's PAutomaC labels 'symbol\\ncount': read as the symbol, the count "
          "of traces dropped";
      // FlexFringe writes only the transitions its training traces took (counts above 0).
      b_.set_missing_meaning(frontend::kFlexFringeMissing);
    }
  }
  // MONA's bit vectors and Spot's guards: every label read so, the alphabet every valuation.
  std::optional<frontend::LabelExpansion> expansion;
  std::vector<std::size_t> expanded_index(edges.size(), 0);
  if (std::none_of(labels.begin(), labels.end(), [&](const auto& l) { return html_.count(l); })) {
    std::vector<std::string> labelled;
    std::vector<std::size_t> edge_of;
    for (std::size_t i = 0; i < edges.size(); ++i)
      if (!unlabelled(i)) {
        expanded_index[i] = labelled.size();
        labelled.push_back(labels[i]);
        edge_of.push_back(i);
      }
    if (!labelled.empty()) {
      expansion = frontend::expand_bit_vectors(labelled);
      if (!expansion) expansion = frontend::expand_guards(labelled);
    }
    if (expansion && !expansion->problem.empty())
      b_.fail(places[edge_of[expansion->problem_label]], expansion->problem);
    if (expansion) {
      // A label of a few bytes ("1") can stand for 4,096 transitions: counted first.
      std::uint64_t transitions = 0;
      for (const auto& table : expansion->letters)
        for (std::uint64_t word : table)
          transitions += static_cast<std::uint64_t>(__builtin_popcountll(word));
      check_memory("the " + std::to_string(transitions) + " transitions the " + expansion->kind +
                       " stand for",
                   saturating_mul(transitions, 160));
      for (const auto& letter : expansion->alphabet) b_.letter(letter, places[edge_of[0]]);
    }
  }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const std::size_t from = boost::source(edges[i], g), to = boost::target(edges[i], g);
    const bool is_html = html_.count(labels[i]) > 0;
    if (unlabelled(i)) {  // a lexer generator's epsilon move
      b_.add_epsilon(*state_of_[from], *state_of_[to], places[i]);
      continue;
    }
    if (expansion) {
      const auto& table = expansion->letters[expanded_index[i]];
      for (std::size_t letter = 0; letter < expansion->alphabet.size(); ++letter)
        if (table[letter / 64] >> (letter % 64) & 1)
          b_.add_transition(*state_of_[from], static_cast<LetterId>(letter), *state_of_[to],
                            places[i]);
      continue;
    }
    for (const std::string& letter : frontend::edge_inputs(labels[i], is_html)) {
      if (letter.empty())
        b_.fail(places[i], "the edge '" + g[from].id + "' -> '" + g[to].id + "' has " +
                               (is_html ? "an empty input in its label"
                                        : "an empty input in its label '" + labels[i] + "'") +
                               ": which letter does it read?");
      if (auto problem = frontend::invalid_utf8_problem(letter, "letter"))
        b_.fail(places[i], *problem);
      const LetterId l = b_.letter(letter, places[i]);
      b_.add_transition(*state_of_[from], l, *state_of_[to], places[i]);
      if (auto output = frontend::edge_output(labels[i], is_html))
        b_.add_output(*state_of_[from], l, *output);
    }
  }
  if (!expansion) return pautomac;
  return expansion->kind + " (" + std::to_string(expansion->alphabet.size()) +
         " letters, every valuation: '" + expansion->alphabet.front() + "', ...)";
}

}  // namespace

Automaton read_dot_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  DotAutomatonReader reader(b, text);
  reader.add_states();
  // Without a start marker the first state listed is initial.
  const std::string expanded = reader.add_transitions();
  if (!expanded.empty() && options.note) options.note(file + ": the edge labels are " + expanded);
  return b.build(options);
}

}  // namespace krc
