#include <doctest/doctest.h>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/decompose/holonomy.hpp"
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

// A cascade of memory units (aperiodic automata: every holonomy group trivial) is built with
// each level also computed at the earlier times the levels below need: one attention layer
// per level, plus one for the decoding MLP (none when there is one level). The two-layers-
// per-level construction it replaces stays available and must agree.
namespace {

CompileResult compile_memory_cascade(const Automaton& a, int max_len, bool time_shifted) {
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = max_len;
  options.kr.time_shifted_memory = time_shifted;
  options.kr.clamped_walk = false;  // gridworld as a cascade, not as a walk
  return compile(a, options);
}

int level_count(const Automaton& a) {
  DecomposeOptions options;
  options.build_tables = false;
  return HolonomyDecomposition::compute(a, options).level_count();
}

}  // namespace

TEST_CASE("kr: a cascade of memory units takes one layer per level, plus one to decode") {
  std::vector<Automaton> automata{test::reference_automaton("flipflop_2"),
                                  test::reference_automaton("flipflop_3")};
  for (int n = 2; n <= 12; ++n) automata.push_back(zoo_automaton("gridworld", n));
  std::mt19937_64 rng(21);
  for (const auto& a : automata) {
    CAPTURE(a.name());
    const int levels = level_count(a);
    const auto shifted = compile_memory_cascade(a, 256, true);
    const auto plain = compile_memory_cascade(a, 256, false);
    REQUIRE(shifted.kr);
    CHECK(shifted.kr->form == CascadeForm::TimeShiftedMemory);
    for (const auto& level : shifted.kr->levels) CHECK(level.mode == LevelMode::Memory);
    CHECK(shifted.network.layers.size() == static_cast<std::size_t>(levels == 1 ? 1 : levels + 1));
    CHECK(shifted.network.layers.size() <= plain.network.layers.size());
    test::check_against_automaton(a, shifted.network, 3, rng, AttentionKind::Softmax);
    test::check_against_automaton(a, shifted.network, 2, rng, AttentionKind::Hard);
  }
}

TEST_CASE("kr: both memory-cascade constructions track aperiodic random automata") {
  // Aperiodic ones with two levels or more, so that the levels below read shifted values.
  std::mt19937_64 rng(23);
  int checked = 0;
  for (int i = 0; checked < 30 && i < 20000; ++i) {
    Automaton a = test::random_automaton(rng, 6, 3);
    DecomposeOptions options;
    options.build_tables = false;
    const auto dec = HolonomyDecomposition::compute(a, options);
    if (!dec.aperiodic() || dec.level_count() < 2) continue;
    ++checked;
    CAPTURE(automaton_to_json(a).dump());
    for (bool time_shifted : {true, false}) {
      CAPTURE(time_shifted);
      const auto result = compile_memory_cascade(a, 24, time_shifted);
      test::check_against_automaton(a, result.network, 6, rng, AttentionKind::Softmax);
      test::check_against_automaton(a, result.network, 2, rng, AttentionKind::Hard);
    }
  }
  CHECK(checked == 30);
}
