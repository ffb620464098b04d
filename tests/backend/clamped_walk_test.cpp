// The clamped walk (gridworld in two layers, strategies/kr/clamped_walk.cpp): recognition
// checked against the automaton itself, networks verified by running them (the verifier's
// oracle is the automaton), and float32 exactness by a plain float32 pass that sums term by
// term (tests/support/float32_forward.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "float32_forward.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/verifier.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

struct Map {
  int shift, low, high;
};

int clamp_map(const Map& m, int c) { return std::clamp(c + m.shift, m.low, m.high); }

// An automaton whose letter i maps cell c to clamp(c + shift, low, high) on a path of n cells,
// its states and letters shuffled and renamed, starting in cell `initial`.
Automaton walk_automaton(int n, std::vector<Map> maps, int initial, std::mt19937_64& rng) {
  std::vector<StateId> state_of_cell(n);
  for (int c = 0; c < n; ++c) state_of_cell[c] = static_cast<StateId>(c);
  std::shuffle(state_of_cell.begin(), state_of_cell.end(), rng);
  std::shuffle(maps.begin(), maps.end(), rng);
  std::vector<std::string> states(n), letters;
  for (int c = 0; c < n; ++c) states[state_of_cell[c]] = "s" + std::to_string(c * 7 % 1000) + "x";
  std::vector<std::vector<StateId>> delta;
  for (std::size_t i = 0; i < maps.size(); ++i) {
    letters.push_back("m" + std::to_string(i));
    std::vector<StateId> row(n);
    for (int c = 0; c < n; ++c) row[state_of_cell[c]] = state_of_cell[clamp_map(maps[i], c)];
    delta.push_back(row);
  }
  return Automaton("walk_" + std::to_string(n), states, letters, delta, state_of_cell[initial]);
}

// The oracle for a recognised walk: the plan's path and clamp maps are the automaton.
void check_plan_describes(const Automaton& a, const WalkPlan& walk) {
  REQUIRE(walk.cells == static_cast<int>(a.state_count()));
  REQUIRE(walk.letters.size() == a.letter_count());
  CHECK(walk.state_of_cell[walk.initial] == a.initial());
  for (LetterId l = 0; l < a.letter_count(); ++l) {
    const WalkLetter& m = walk.letters[l];
    CHECK(m.name == a.letter_name(l));
    for (int c = 0; c < walk.cells; ++c)
      CHECK(a.step(walk.state_of_cell[c], l) ==
            walk.state_of_cell[clamp_map({m.shift, m.low, m.high}, c)]);
  }
}

// Random clamp maps on n cells, the first a move by one cell.
std::vector<Map> random_maps(int n, int count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> cell(0, n - 1), shift(-n, n), coin(0, 3);
  std::vector<Map> maps{{coin(rng) % 2 ? 1 : -1, 0, n - 1}};
  while (static_cast<int>(maps.size()) < count) {
    int low = coin(rng) ? 0 : cell(rng), high = coin(rng) ? n - 1 : cell(rng);
    if (low > high) std::swap(low, high);
    maps.push_back({shift(rng), low, high});
  }
  return maps;
}

Network compile_kr(const Automaton& a, int max_len) {
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = max_len;
  return compile(a, options).network;
}

// Every word up to `exhaustive` letters (default: the longest length with at most 100,000
// words, scaled by KRC_TEST_SCALE: the exhaustive part is most of the sanitizer build's time)
// and `words` random words of max_len (scaled too).
void require_verified(const Network& net, const Automaton& a, long long words,
                      std::optional<int> exhaustive = std::nullopt) {
  VerifyOptions options;
  options.exhaustive_length = exhaustive;
  options.max_exhaustive_words = test::scaled(options.max_exhaustive_words);
  options.random_words = test::scaled(words);
  options.seed = 11;
  const VerifyReport report = verify(net, a, options);
  CAPTURE(format_report(report, a));
  REQUIRE(report.ok());
}

}  // namespace

TEST_CASE(
    "clamped walk: gridworld and its renamings are recognised, other automata only as walks") {
  // Gridworld_4096's plan builds its network for the depth: a decode MLP of 200 million
  // weights, minutes under the sanitizers, so KRC_TEST_SCALE < 1 stops at 100 cells.
  std::vector<int> cells{2, 3, 4, 9, 17, 64, 100, 4096};
  if (test::test_scale() < 1.0) {
    cells.pop_back();
    MESSAGE("gridworld_4096 left out at KRC_TEST_SCALE " << test::test_scale());
  }
  for (int n : cells) {
    CAPTURE(n);
    const Automaton a = zoo_automaton("gridworld", n);
    const auto plan = plan_clamped_walk(a, 1024);
    // Two cells are a single memory unit, one layer as a cascade.
    REQUIRE(plan.has_value() == (n >= 3));
    if (!plan) continue;
    check_plan_describes(a, *plan);
    CHECK(plan->form == WalkForm::UnitSteps);
    CHECK(plan->layers == 2);
  }
  // At KRC_TEST_SCALE < 1 a sample of the random walks, reference automata and random
  // automata below: plan_clamped_walk builds every recognised walk's network for its depth,
  // which takes seconds each under the sanitizers. Scale 1 takes them all.
  std::mt19937_64 rng(7);
  const long long random_walks = test::scaled(200), random_automata = test::scaled(3000);
  for (int i = 0; i < random_walks; ++i) {
    const int n = std::uniform_int_distribution<int>(3, 20)(rng);
    std::vector<Map> maps{{-1, 0, n - 1}, {1, 0, n - 1}};
    if (i % 2) maps.push_back({0, 0, n - 1});  // a letter that stays put
    if (i % 3 == 0) maps = random_maps(n, 4, rng);
    const Automaton a =
        walk_automaton(n, maps, std::uniform_int_distribution<int>(0, n - 1)(rng), rng);
    CAPTURE(automaton_to_json(a).dump());
    const auto plan = plan_clamped_walk(a, 64);
    REQUIRE(plan);
    check_plan_describes(a, *plan);
  }
  const auto names = test::scaled_sample(test::reference_automaton_names());
  for (const auto& name : names) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    CHECK(plan_clamped_walk(a, 64).has_value() == (name == "gridworld_4" || name == "gridworld_9"));
  }
  int walks = 0;
  for (int i = 0; i < random_automata; ++i) {
    const Automaton a = test::random_automaton(rng, 5, 3);
    const auto plan = plan_clamped_walk(a, 64);
    if (!plan) continue;
    ++walks;
    CAPTURE(automaton_to_json(a).dump());
    check_plan_describes(a, *plan);
  }
  MESSAGE(random_walks << " random walks recognised, " << names.size()
                       << " reference automata checked, " << walks << " of " << random_automata
                       << " random automata are clamped walks");
}

// Every n from 2 to 64 is compiled at max-len 64 and a spread of them at 1024 and 8192; a
// spread is verified (all of them, at every max-len, took about an hour on 2 cores; README
// gives those figures).
TEST_CASE("clamped walk: gridworld_n is two layers at every max-len and verifies") {
  for (int n = 2; n <= 64; ++n) {
    CAPTURE(n);
    const Automaton a = zoo_automaton("gridworld", n);
    const Network net = compile_kr(a, 64);
    CHECK(net.layers.size() == (n == 2 ? 1u : 2u));
    if (n % 8 == 1 || n == 64) {  // the widths grow with max-len; the depth does not
      CHECK(compile_kr(a, 1024).layers.size() == net.layers.size());
      CHECK(compile_kr(a, 8192).layers.size() == net.layers.size());
    }
  }
  for (int n : {2, 3, 4, 7, 16, 33, 64}) {
    CAPTURE(n);
    const Automaton a = zoo_automaton("gridworld", n);
    require_verified(compile_kr(a, 64), a, 500, 12);
  }
  for (int n : {3, 9, 64}) {
    CAPTURE(n);
    const Automaton a = zoo_automaton("gridworld", n);
    require_verified(compile_kr(a, 1024), a, 10, 8);
  }
}

TEST_CASE("clamped walk: several step sizes, resets and walls inside the path verify") {
  std::mt19937_64 rng(17);
  const long long automata = test::scaled(60);
  for (int i = 0; i < automata; ++i) {
    const int n = std::uniform_int_distribution<int>(3, 10)(rng);
    const int letters = std::uniform_int_distribution<int>(2, 4)(rng);
    const Automaton a = walk_automaton(n, random_maps(n, letters, rng),
                                       std::uniform_int_distribution<int>(0, n - 1)(rng), rng);
    CAPTURE(automaton_to_json(a).dump());
    const Network net = compile_kr(a, i % 10 == 0 ? 1024 : 64);
    CHECK(net.layers.size() == 2);
    require_verified(net, a, i % 10 == 0 ? 10 : 200);
  }
  MESSAGE(automata << " random walks verified");
}

TEST_CASE("clamped walk: the plan predicts the network's layers, heads and MLP units") {
  std::mt19937_64 rng(37);
  std::vector<Automaton> automata;
  for (int n : {3, 9, 64}) automata.push_back(zoo_automaton("gridworld", n));
  for (int i = 0; i < 3; ++i)
    automata.push_back(walk_automaton(6 + i, random_maps(6 + i, 3, rng), 1, rng));
  for (const auto& a : automata)
    for (int max_len : {64, 1000, 8192}) {
      CAPTURE(automaton_to_json(a).dump());
      CAPTURE(max_len);
      CompileOptions options;
      options.strategy = Strategy::Kr;
      options.max_len = max_len;
      const CompileResult result = compile(a, options);
      REQUIRE(result.walk);
      CHECK(!result.kr);  // a walk, not a cascade
      const WalkPlan& walk = *result.walk;
      const Network& net = result.network;
      REQUIRE(net.layers.size() == static_cast<std::size_t>(walk.layers));
      for (std::size_t i = 0; i < net.layers.size(); ++i) {
        CHECK(net.layers[i].heads.size() == static_cast<std::size_t>(walk.heads[i]));
        REQUIRE(net.layers[i].mlp);
        CHECK(net.layers[i].mlp->hidden() == walk.mlp_units[i]);
      }
    }
}

TEST_CASE("clamped walk: exact under a plain float32 pass at max-len 2048") {
  std::mt19937_64 rng(29);
  std::vector<Automaton> all{zoo_automaton("gridworld", 64), zoo_automaton("gridworld", 5)};
  all.push_back(walk_automaton(7, {{1, 0, 6}, {-3, 0, 6}, {0, 2, 2}, {2, 1, 5}}, 3, rng));
  // The plain float32 pass is quadratic in the length and takes minutes an automaton under the
  // sanitizers: at KRC_TEST_SCALE < 1 a sample (the first, gridworld_64, whose sums are the
  // largest); scale 1 takes all three.
  const auto automata = test::scaled_sample(all);
  MESSAGE(automata.size() << " of " << all.size() << " walks checked");
  for (const auto& a : automata) {
    CAPTURE(a.name());
    const Network net = compile_kr(a, 2048);
    std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(a.letter_count() - 1));
    std::vector<std::vector<LetterId>> words(2, std::vector<LetterId>(2048));
    for (auto& l : words[0]) l = letter(rng);
    for (std::size_t t = 0; t < 2048; ++t) words[1][t] = t < 1024 ? 0 : 1;  // far to one side
    for (const auto& word : words) {
      const auto expected = a.run(word);
      const RowMatrix x = test::float32_residual(net, word);
      const auto actual = test::float32_states(net, x);
      REQUIRE(actual.size() == expected.size());
      for (std::size_t t = 0; t < expected.size(); ++t) {
        if (actual[t] == static_cast<int>(expected[t])) continue;
        CAPTURE(t);
        REQUIRE(actual[t] == static_cast<int>(expected[t]));
      }
      // Every residual value the construction writes is an exact integer (sums, residues,
      // copies, the cell one-hot); only the embeddings' constants are not.
      for (const auto& s : net.subspaces)
        if (s.role.kind != RoleKind::Unspecified && s.role.kind != RoleKind::Token &&
            s.role.kind != RoleKind::PositionCode && s.role.kind != RoleKind::Position &&
            s.role.kind != RoleKind::Bos && s.role.kind != RoleKind::Constant)
          for (int i = s.first; i < s.first + s.width; ++i)
            for (int t = 0; t < x.rows(); ++t)
              if (x(t, i) != std::round(x(t, i))) {
                CAPTURE(s.name);
                CAPTURE(t);
                REQUIRE(x(t, i) == std::round(x(t, i)));
              }
    }
  }
}
