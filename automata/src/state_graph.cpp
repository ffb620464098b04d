#include "krc/automata/state_graph.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/strong_components.hpp>
#include <limits>

namespace krc {

namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// One edge per distinct (q, delta(q, a)): parallel edges add nothing to reachability.
Graph state_graph(const Automaton& automaton) {
  Graph g(automaton.state_count());
  std::vector<StateId> targets;
  for (StateId q = 0; q < automaton.state_count(); ++q) {
    targets.clear();
    for (LetterId a = 0; a < automaton.letter_count(); ++a) targets.push_back(automaton.step(q, a));
    std::sort(targets.begin(), targets.end());
    targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
    for (StateId r : targets) boost::add_edge(q, r, g);
  }
  return g;
}

std::vector<bool> reachable_from(const Graph& g, StateId from) {
  std::vector<boost::default_color_type> colors(boost::num_vertices(g), boost::white_color);
  auto color_map =
      boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, g));
  boost::breadth_first_visit(g, from, boost::color_map(color_map));
  std::vector<bool> reached(colors.size());
  for (std::size_t q = 0; q < colors.size(); ++q) reached[q] = colors[q] != boost::white_color;
  return reached;
}

}  // namespace

std::vector<StateId> reachable_states(const Automaton& automaton, StateId from) {
  auto reached = reachable_from(state_graph(automaton), from);
  std::vector<StateId> states;
  for (StateId q = 0; q < reached.size(); ++q)
    if (reached[q]) states.push_back(q);
  return states;
}

StateGraphAnalysis analyze_state_graph(const Automaton& automaton) {
  Graph g = state_graph(automaton);
  const std::size_t n = automaton.state_count();
  StateGraphAnalysis result;
  result.reachable = reachable_from(g, automaton.initial());
  result.reachable_count =
      static_cast<std::size_t>(std::count(result.reachable.begin(), result.reachable.end(), true));
  result.all_reachable = result.reachable_count == n;

  std::vector<std::size_t> boost_component(n);
  std::size_t count =
      boost::strong_components(g, boost::make_iterator_property_map(
                                      boost_component.begin(), boost::get(boost::vertex_index, g)));
  // Boost numbers components in reverse topological order; renumber by smallest state so the
  // numbering does not depend on the search.
  constexpr std::size_t kUnset = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> renumber(count, kUnset);
  result.component_of.resize(n);
  for (StateId q = 0; q < n; ++q) {
    std::size_t& c = renumber[boost_component[q]];
    if (c == kUnset) {
      c = result.components.size();
      result.components.emplace_back();
    }
    result.component_of[q] = c;
    result.components[c].push_back(q);
  }
  std::vector<bool> left(result.components.size(), false);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    auto from = result.component_of[boost::source(*e, g)];
    if (from != result.component_of[boost::target(*e, g)]) left[from] = true;
  }
  for (std::size_t c = 0; c < left.size(); ++c)
    if (!left[c]) result.sink_components.push_back(c);
  return result;
}

}  // namespace krc
