#include <doctest/doctest.h>

#include "krc/automata/automaton_json.hpp"
#include "krc/backend/compile.hpp"
#include "oracle_check.hpp"
#include "test_support.hpp"

using namespace krc;

TEST_CASE("scan networks of small reference automata track the automaton") {
  std::mt19937_64 rng(7);
  for (const char* name : {"parity", "cyclic_3", "dihedral_3", "flipflop_3", "gridworld_4", "abab",
                           "full_transformations_3", "quaternion"}) {
    CAPTURE(name);
    Automaton a = test::reference_automaton(name);
    CompileOptions options;
    options.strategy = Strategy::Scan;
    options.max_len = 12;
    Network net = compile(a, options).network;
    CHECK_NOTHROW(net.check_shapes());
    // ceil(log2 12) = 4 doubling steps.
    CHECK(net.layers.size() == 4);
    test::check_against_automaton(a, net, 20, rng, AttentionKind::Softmax);
    test::check_against_automaton(a, net, 5, rng, AttentionKind::Hard);
  }
}

TEST_CASE("scan networks of random automata track the automaton") {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 30; ++i) {
    Automaton a = test::random_automaton(rng, 6, 3);
    CAPTURE(a.name());
    CompileOptions options;
    options.strategy = Strategy::Scan;
    options.max_len = 9;
    test::check_against_automaton(a, compile(a, options).network, 6, rng, AttentionKind::Softmax);
  }
}
