// Arithmetic::Float32, a plain float32 framework: bit for bit the dense float32 forward pass of
// the test support (every term, every sum in order), on random networks, networks whose keys
// repeat (the run path), long rows of select heads (the key tree) and compiled networks; and
// the replayed sums of identical terms against the loop they replace.
#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <cstring>

#include "f32_kernel_run.hpp"
#include "forward/float32_kernels.hpp"
#include "forward/identical_sum.hpp"
#include "forward/prepared_network.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "naive_forward.hpp"
#include "random_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

float loop_sum(float s, float term, long long count) {
  for (long long i = 0; i < count; ++i) s += term;
  return s;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Logits equal as numbers (a zero's sign may differ: +0 and -0 sum alike).
void check_equal(const Eigen::MatrixXd& actual, const Eigen::MatrixXd& oracle) {
  REQUIRE(actual.rows() == oracle.rows());
  REQUIRE(actual.cols() == oracle.cols());
  long long differing = 0;
  for (Eigen::Index t = 0; t < oracle.rows(); ++t)
    for (Eigen::Index s = 0; s < oracle.cols(); ++s)
      if (!(actual(t, s) == oracle(t, s)) &&
          !(std::isnan(actual(t, s)) && std::isnan(oracle(t, s))))
        ++differing;
  CHECK(differing == 0);
}

constexpr AttentionKind kAttentions[] = {AttentionKind::Softmax, AttentionKind::Hard,
                                         AttentionKind::Hardmax};

// The float32 forward pass with rows of select heads through the key tree from `tree_from` on.
ForwardPass float32_pass(const Network& n, AttentionKind attention, int tree_from = 1024) {
  ForwardOptions options{attention, Arithmetic::Float32, 1};
  options.key_tree_from_row = tree_from;
  return ForwardPass(n, options);
}

// Query rows by path, running the Float32 kernels as ForwardPass does.
kernels::f32::Scratch count_paths(const Network& net, const std::vector<LetterId>& word) {
  return test::run_f32_kernels(net, PreparedNetwork(net), word).attention;
}

}  // namespace

TEST_CASE("float32: a replayed sum of identical terms equals the loop, bit for bit") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  auto power = [&](int low, int high) {
    return std::ldexp(1.0f, std::uniform_int_distribution<int>(low, high)(rng));
  };
  int checked = 0;
  for (int round = 0; round < 20000; ++round) {
    float start = 0.0f, term = 0.0f;
    switch (round % 5) {
      case 0:  // anything
        start = unit(rng) * power(-20, 20);
        term = unit(rng) * power(-20, 20);
        break;
      case 1:  // a softmax normaliser: weights below 1 from 0
        term = std::abs(unit(rng)) * power(-30, 0);
        break;
      case 2: {  // ties: a term of (K + 1/2) ulp of the start's binade, either sign
        const int e = std::uniform_int_distribution<int>(-10, 10)(rng);
        term = static_cast<float>((static_cast<int>(rng() % 5) + 0.5) * std::ldexp(1.0, e - 23));
        start = std::ldexp(1.0f, e) * (1.0f + std::abs(unit(rng)));
        if (rng() % 2) term = -term;
        if (rng() % 2) start = -start;
        break;
      }
      case 3:  // subnormals
        start = std::ldexp(1.0f, -140) * static_cast<float>(rng() % 100);
        term = std::ldexp(1.0f, -149) * static_cast<float>(1 + rng() % 50) * (rng() % 2 ? 1 : -1);
        break;
      default:  // sums that cross zero
        start = unit(rng) * 100.0f;
        term = -start / static_cast<float>(1 + rng() % 1000) * (1.0f + unit(rng) * 1e-3f);
    }
    const long long count = static_cast<long long>(rng() % (round % 3 == 0 ? 20 : 30000));
    const float expected = loop_sum(start, term, count);
    const float replayed = sequential_sum_of_identical(start, term, count);
    CAPTURE(start);
    CAPTURE(term);
    CAPTURE(count);
    CHECK((same_bits(replayed, expected) || (replayed == 0.0f && expected == 0.0f)));
    ++checked;
  }
  CHECK(checked == 20000);
  CHECK(std::exp(-104.0f) == 0.0f);  // the skip threshold: such weights are exact zeros
}

TEST_CASE("float32: random networks give the dense float32 formula bit for bit") {
  std::mt19937_64 rng(301);
  int words = 0;
  for (int i = 0; i < 30; ++i) {
    test::RandomNetworkShape shape;
    shape.max_len = i % 3 == 0 ? 150 : 12;
    if (i % 5 == 4) shape.scale = 80.0f;  // most softmax terms underflow
    const Automaton a = test::random_automaton(rng, 4, 3);
    const Network n = test::random_network(rng, a, shape);
    for (int w = 0; w < 4; ++w) {
      const auto word = test::random_word(rng, static_cast<int>(a.letter_count()),
                                          std::uniform_int_distribution<int>(0, n.max_len)(rng));
      for (AttentionKind attention : kAttentions) {
        CAPTURE(word.size());
        const Eigen::MatrixXd oracle = test::naive_logits_float32(n, word, attention);
        check_equal(float32_pass(n, attention).run(word), oracle);
        check_equal(float32_pass(n, attention, 0).run(word), oracle);  // every select row by tree
      }
      ++words;
    }
  }
  CHECK(words == 120);
}

TEST_CASE("float32: keys that repeat take the run path and still give the dense formula") {
  std::mt19937_64 rng(302);
  long long run_rows = 0;
  for (int i = 0; i < 10; ++i) {
    const Automaton a = test::random_automaton(rng, 4, 3);
    const Network n = test::repeated_key_network(rng, a, 200);
    const int letters = static_cast<int>(a.letter_count());
    for (const auto& word : {test::random_word(rng, letters, 200), std::vector<LetterId>(200, 0),
                             test::random_word(rng, letters, 77)}) {
      for (AttentionKind attention : kAttentions)
        check_equal(float32_pass(n, attention).run(word),
                    test::naive_logits_float32(n, word, attention));
      run_rows += count_paths(n, word).run_rows;
    }
  }
  // The counter head's keys form two runs (BOS, the rest): rows 31 on, in every word.
  CHECK(run_rows >= 10 * (2 * (201 - 31) + (78 - 31)));
}

TEST_CASE("float32: compiled networks give the dense float32 formula and the automaton's states") {
  std::mt19937_64 rng(303);
  int compared = 0;
  for (const char* name : {"parity", "cyclic_5", "quaternion", "symmetric_4", "dihedral_4",
                           "gridworld_4", "abab", "flipflop_3"}) {
    for (Strategy strategy : {Strategy::Kr, Strategy::Scan}) {
      CAPTURE(name);
      const Automaton a = test::reference_automaton(name);
      CompileOptions options;
      options.strategy = strategy;
      options.max_len = 96;
      const Network net = compile(a, options).network;
      const int letters = static_cast<int>(a.letter_count());
      for (const auto& word : {std::vector<LetterId>(96, 0), test::random_word(rng, letters, 96),
                               test::random_word(rng, letters, 41)}) {
        for (AttentionKind attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
          const Eigen::MatrixXd oracle = test::naive_logits_float32(net, word, attention);
          const Eigen::MatrixXd logits = float32_pass(net, attention, 32).run(word);
          check_equal(logits, oracle);
          const std::vector<StateId> expected = a.run(word);
          for (std::size_t t = 0; t < expected.size(); ++t) {
            Eigen::Index best;
            logits.row(static_cast<Eigen::Index>(t)).maxCoeff(&best);
            CHECK(best == static_cast<Eigen::Index>(expected[t]));
          }
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 8 * 2 * 3 * 2);
}

TEST_CASE("float32: long rows of select heads through the key tree equal scoring every key") {
  // Scan networks fetch through position codes: from row 1024 on (the default) the tree
  // serves their rows; a threshold beyond the word scores every key.
  std::mt19937_64 rng(304);
  for (const char* name : {"parity", "gridworld_4", "cyclic_3"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    CompileOptions options;
    options.strategy = Strategy::Scan;
    options.max_len = 2100;
    const Network net = compile(a, options).network;
    const auto word = test::random_word(rng, static_cast<int>(a.letter_count()), 2100);
    for (AttentionKind attention : kAttentions) {
      const Eigen::MatrixXd dense = float32_pass(net, attention, INT_MAX).run(word);
      check_equal(float32_pass(net, attention).run(word), dense);
      check_equal(float32_pass(net, attention, 0).run(word), dense);
    }
    CHECK(count_paths(net, word).tree_rows > 0);
  }
}
