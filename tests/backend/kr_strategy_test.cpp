#include <doctest/doctest.h>

#include "krc/automaton_json.hpp"
#include "krc/compile.hpp"
#include "oracle_check.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

Network compile_kr(const Automaton& a, int max_len) {
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = max_len;
  return compile(a, options).network;
}

}  // namespace

TEST_CASE("kr networks of small reference automata track the automaton") {
  std::mt19937_64 rng(5);
  for (const char* name : {"parity", "cyclic_3", "cyclic_6", "flipflop_3", "gridworld_4", "abab",
                           "dihedral_3", "quaternion", "full_transformations_3", "symmetric_3"}) {
    CAPTURE(name);
    Automaton a = test::reference_automaton(name);
    Network net = compile_kr(a, 12);
    CHECK_NOTHROW(net.check_shapes());
    test::check_against_automaton(a, net, 12, rng, AttentionKind::Softmax);
    test::check_against_automaton(a, net, 4, rng, AttentionKind::Hard);
  }
}

TEST_CASE("kr networks of random automata track the automaton") {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 40; ++i) {
    Automaton a = test::random_automaton(rng, 5, 3);
    CAPTURE(a.name());
    CAPTURE(i);
    test::check_against_automaton(a, compile_kr(a, 10), 5, rng, AttentionKind::Softmax);
  }
}
