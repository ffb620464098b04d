#include "krc/automata/state_graph.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "krc/automata/zoo.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// The oracle: reachability matrix by repeated relaxation (Floyd-Warshall closure).
std::vector<std::vector<bool>> reachability(const Automaton& a) {
  const std::size_t n = a.state_count();
  std::vector<std::vector<bool>> r(n, std::vector<bool>(n, false));
  for (StateId q = 0; q < n; ++q) {
    r[q][q] = true;
    for (LetterId l = 0; l < a.letter_count(); ++l) r[q][a.step(q, l)] = true;
  }
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < n; ++i)
      if (r[i][k])
        for (std::size_t j = 0; j < n; ++j)
          if (r[k][j]) r[i][j] = true;
  return r;
}

}  // namespace

TEST_CASE("state graph analysis agrees with brute-force reachability on random automata") {
  std::mt19937_64 rng(42);
  int with_unreachable = 0, with_several_sinks = 0;
  for (int trial = 0; trial < 500; ++trial) {
    // Few letters make unreachable states and several components likely.
    Automaton a = test::random_automaton(rng, 12, 2);
    CAPTURE(a.transitions());
    auto r = reachability(a);
    auto g = analyze_state_graph(a);
    const std::size_t n = a.state_count();

    std::size_t reachable = 0;
    for (StateId q = 0; q < n; ++q) {
      CHECK(g.reachable[q] == r[a.initial()][q]);
      reachable += r[a.initial()][q];
    }
    CHECK(g.reachable_count == reachable);
    CHECK(g.all_reachable == (reachable == n));
    with_unreachable += reachable < n;

    // Same component exactly when mutually reachable; components partition the states.
    std::size_t listed = 0;
    for (std::size_t c = 0; c < g.components.size(); ++c) {
      listed += g.components[c].size();
      for (StateId q : g.components[c]) CHECK(g.component_of[q] == c);
    }
    CHECK(listed == n);
    for (StateId p = 0; p < n; ++p)
      for (StateId q = 0; q < n; ++q)
        CHECK((g.component_of[p] == g.component_of[q]) == (r[p][q] && r[q][p]));
    // Numbered by smallest state: component c's first state is smaller than component c+1's.
    for (std::size_t c = 1; c < g.components.size(); ++c)
      CHECK(g.components[c - 1].front() < g.components[c].front());

    // A sink component reaches only itself.
    for (std::size_t c = 0; c < g.components.size(); ++c) {
      StateId q = g.components[c].front();
      bool sink = true;
      for (StateId p = 0; p < n; ++p)
        if (r[q][p] && g.component_of[p] != c) sink = false;
      bool listed_as_sink = std::find(g.sink_components.begin(), g.sink_components.end(), c) !=
                            g.sink_components.end();
      CHECK(listed_as_sink == sink);
    }
    with_several_sinks += g.sink_components.size() > 1;

    auto from_initial = reachable_states(a, a.initial());
    CHECK(from_initial.size() == reachable);
    for (StateId q : from_initial) CHECK(r[a.initial()][q]);
  }
  CHECK(with_unreachable > 10);
  CHECK(with_several_sinks > 10);
}

TEST_CASE("state graphs of zoo automata") {
  // A group's regular action is one strongly connected component.
  auto s = analyze_state_graph(zoo_automaton("symmetric", 4));
  CHECK(s.components.size() == 1);
  CHECK(s.all_reachable);
  // abab: 3 -a-> 0 -b-> 1 -a-> 2 -b-> 3 is a cycle, 4 is the sink.
  auto abab = analyze_state_graph(zoo_automaton("abab"));
  CHECK(abab.components.size() == 2);
  CHECK(abab.components[0] == std::vector<StateId>{0, 1, 2, 3});
  CHECK(abab.components[1] == std::vector<StateId>{4});
  CHECK(abab.sink_components == std::vector<std::size_t>{1});
  // From the flip-flop's initial state every value can be written.
  CHECK(analyze_state_graph(zoo_automaton("flipflop", 4)).all_reachable);
}

TEST_CASE("unreachable states are reported") {
  // q2 only loops to itself and nothing enters it.
  Automaton a("island", {"q0", "q1", "q2"}, {"x"}, {{1, 0, 2}}, 0);
  auto g = analyze_state_graph(a);
  CHECK(g.reachable == std::vector<bool>{true, true, false});
  CHECK(g.reachable_count == 2);
  CHECK_FALSE(g.all_reachable);
  CHECK(g.components.size() == 2);
  CHECK(g.sink_components == std::vector<std::size_t>{0, 1});
}
