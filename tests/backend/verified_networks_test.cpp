// End to end: compiled networks, run by the runtime under softmax attention, give the
// automaton's state at every position of every tested word (the verifier's oracle is the
// automaton itself).
#include <doctest/doctest.h>

#include "krc/automaton_json.hpp"
#include "krc/compile.hpp"
#include "krc/holonomy.hpp"
#include "krc/verifier.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

Network build(const Automaton& a, Strategy strategy, int max_len) {
  CompileOptions options;
  options.strategy = strategy;
  options.max_len = max_len;
  return compile(a, options).network;
}

// All words of length `exhaustive` (hence every shorter word, as prefixes) and `words`
// random words of length `length` (scaled by KRC_TEST_SCALE). These tests check the
// constructions on thousands of networks, in float64-accumulate arithmetic for speed (a
// plain float32 framework evaluates every active comb unit); "float32:" below and the heavy
// tests check what a float32 framework computes.
void require_verified(const Network& net, const Automaton& a, int exhaustive, long long words,
                      int length) {
  VerifyOptions options;
  options.forward.arithmetic = Arithmetic::Float64Accumulate;
  options.exhaustive_length = std::min(exhaustive, net.max_len);
  options.max_exhaustive_words = 1LL << 40;
  options.random_words = test::scaled(words);
  options.random_length = length;
  options.seed = 2026;
  VerifyReport report = verify(net, a, options);
  CAPTURE(format_report(report, a));
  REQUIRE(report.ok());
  REQUIRE(report.words == (report.exhaustive_words + test::scaled(words)));
}

bool solvable(const Automaton& a) {
  DecomposeOptions options;
  options.build_tables = false;
  return HolonomyDecomposition::compute(a, options).solvable();
}

const std::vector<std::string> kNonSolvable{"alternating_5", "symmetric_5",
                                            "full_transformations_5"};

}  // namespace

TEST_CASE("scan: every reference automaton verifies at max-len 256") {
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    Automaton a = test::reference_automaton(name);
    require_verified(build(a, Strategy::Scan, 256), a, 6, 500, 256);
  }
}

// 1000 random automata (up to 8 states, up to 4 letters) in four parts that ctest runs in
// parallel.
static void scan_random_part(int part) {
  std::mt19937_64 rng(1000 + part);
  for (int i = 0; i < test::scaled(250); ++i) {
    Automaton a = test::random_automaton(rng, 8, 4);
    CAPTURE(part);
    CAPTURE(i);
    CAPTURE(automaton_to_json(a).dump());
    require_verified(build(a, Strategy::Scan, 64), a, 6, 500, 64);
  }
}
TEST_CASE("scan: random automata verify at max-len 64, part 1") { scan_random_part(1); }
TEST_CASE("scan: random automata verify at max-len 64, part 2") { scan_random_part(2); }
TEST_CASE("scan: random automata verify at max-len 64, part 3") { scan_random_part(3); }
TEST_CASE("scan: random automata verify at max-len 64, part 4") { scan_random_part(4); }

TEST_CASE("kr: every solvable reference automaton verifies at max-len 1024") {
  for (const auto& name : test::reference_automaton_names()) {
    if (std::find(kNonSolvable.begin(), kNonSolvable.end(), name) != kNonSolvable.end()) continue;
    CAPTURE(name);
    Automaton a = test::reference_automaton(name);
    REQUIRE(solvable(a));
    require_verified(build(a, Strategy::Kr, 1024), a, 6, 300, 1024);
  }
}

TEST_CASE(
    "kr: non-solvable reference automata verify at max-len 1024 (scan on their non-solvable "
    "levels)") {
  for (const auto& name : kNonSolvable) {
    CAPTURE(name);
    Automaton a = test::reference_automaton(name);
    REQUIRE_FALSE(solvable(a));
    CompileOptions options;
    options.strategy = Strategy::Kr;
    options.max_len = 1024;
    CompileResult result = compile(a, options);
    bool has_scan_level = false;
    for (const auto& level : result.kr->levels) has_scan_level |= level.mode == LevelMode::Scan;
    CHECK(has_scan_level);
    require_verified(result.network, a, 6, 300, 1024);
  }
}

// The solvable ones among 300 random automata (up to 6 states, up to 3 letters), in three
// parts.
static void kr_random_part(int part) {
  std::mt19937_64 rng(3000 + part);
  int solvable_count = 0;
  int drawn = 0;
  // At a small KRC_TEST_SCALE, draws on until one is solvable (at most the full 100).
  for (; drawn < 100 && (drawn < test::scaled(100) || solvable_count == 0); ++drawn) {
    Automaton a = test::random_automaton(rng, 6, 3);
    if (!solvable(a)) continue;
    ++solvable_count;
    CAPTURE(part);
    CAPTURE(drawn);
    CAPTURE(automaton_to_json(a).dump());
    require_verified(build(a, Strategy::Kr, 1024), a, 6, 300, 1024);
  }
  MESSAGE(solvable_count << " of " << drawn << " random automata were solvable");
  CHECK(solvable_count > 0);
}
TEST_CASE("kr: solvable random automata verify at max-len 1024, part 1") { kr_random_part(1); }
TEST_CASE("kr: solvable random automata verify at max-len 1024, part 2") { kr_random_part(2); }
TEST_CASE("kr: solvable random automata verify at max-len 1024, part 3") { kr_random_part(3); }

// Counting switches once from plain sums to blocks of sqrt(T) where float32 sums would round
// (kr_plan.cpp), which may add a layer per counter; within each regime depth is constant.
TEST_CASE("kr: depth does not grow with max-len within a counting regime") {
  std::vector<Automaton> automata;
  for (const auto& name : test::reference_automaton_names())
    if (std::find(kNonSolvable.begin(), kNonSolvable.end(), name) == kNonSolvable.end())
      automata.push_back(test::reference_automaton(name));
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

TEST_CASE("scan: gridworld_9 and symmetric_5 at max-len 4096 verify on 100 words of length 4096") {
  for (const char* name : {"gridworld_9", "symmetric_5"}) {
    CAPTURE(name);
    Automaton a = test::reference_automaton(name);
    require_verified(build(a, Strategy::Scan, 4096), a, 0, 100, 4096);
  }
}
