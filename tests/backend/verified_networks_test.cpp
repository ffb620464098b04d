// The shape of compiled networks: kr's depth against max-len, and what auto keeps. Whether they
// compute the automaton is end_to_end_test.cpp's, over the table of cases
// (tests/support/cases.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "case_checks.hpp"
#include "krc/backend/compile.hpp"
#include "test_support.hpp"

using namespace krc;
using test::solvable;

namespace {

Network build(const Automaton& a, Strategy strategy, int max_len) {
  CompileOptions options;
  options.strategy = strategy;
  options.max_len = max_len;
  return compile(a, options).network;
}

}  // namespace

// Counting switches once from plain sums to blocks of sqrt(T) where float32 sums would round
// (kr_plan.cpp), which may add a layer per counter; within each regime depth is constant.
TEST_CASE("kr: depth does not grow with max-len within a counting regime") {
  std::vector<Automaton> automata;
  for (const auto& name : test::reference_automaton_names())
    if (Automaton a = test::reference_automaton(name); solvable(a)) automata.push_back(a);
  std::mt19937_64 rng(77);
  while (automata.size() < 60) {
    Automaton a = test::random_automaton(rng, 6, 3);
    if (solvable(a)) automata.push_back(a);
  }
  for (const auto& a : automata) {
    CAPTURE(a.name());
    const auto layers = build(a, Strategy::Kr, 64).layers.size();
    CHECK(build(a, Strategy::Kr, 1024).layers.size() == layers);
    const auto block_layers = build(a, Strategy::Kr, 8192).layers.size();
    CHECK(block_layers >= layers);
    CHECK(build(a, Strategy::Kr, 65536).layers.size() == block_layers);
  }
}

TEST_CASE("kr: parity and flip-flops take at most two layers, gridworld a constant number") {
  CHECK(build(test::reference_automaton("parity"), Strategy::Kr, 1024).layers.size() <= 2);
  CHECK(build(test::reference_automaton("flipflop_2"), Strategy::Kr, 1024).layers.size() <= 2);
  CHECK(build(test::reference_automaton("flipflop_3"), Strategy::Kr, 1024).layers.size() <= 2);
  for (const char* name : {"gridworld_4", "gridworld_9"}) {
    CAPTURE(name);
    Automaton a = test::reference_automaton(name);
    const auto layers = build(a, Strategy::Kr, 16).layers.size();
    CHECK(build(a, Strategy::Kr, 4096).layers.size() == layers);
  }
}

TEST_CASE("auto keeps the strategy with fewer layers") {
  for (const char* name : {"parity", "gridworld_9", "symmetric_4", "full_transformations_4"}) {
    CAPTURE(name);
    Automaton a = test::reference_automaton(name);
    for (int max_len : {16, 1024}) {
      CAPTURE(max_len);
      const auto scan = build(a, Strategy::Scan, max_len).size();
      const auto kr = build(a, Strategy::Kr, max_len).size();
      const bool kr_better =
          kr.layers < scan.layers || (kr.layers == scan.layers && kr.parameters < scan.parameters);
      CompileOptions options;
      options.max_len = max_len;
      CompileResult chosen = compile(a, options);
      CHECK(chosen.strategy == (kr_better ? Strategy::Kr : Strategy::Scan));
      CHECK(chosen.network.layers.size() ==
            static_cast<std::size_t>(std::min(scan.layers, kr.layers)));
    }
  }
}
