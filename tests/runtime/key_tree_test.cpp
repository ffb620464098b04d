// Bounds on blocks of keys (key_tree.hpp): the searches against brute force over every key,
// and forward passes whose heads use the tree against the same passes scoring every key
// (bitwise), on random and compiled networks, in every arithmetic.
#include "forward/key_tree.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <cmath>

#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "random_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

using Rows = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

ForwardPass pass_with_tree_from(const Network& n, AttentionKind attention, Arithmetic arithmetic,
                                int tree_from) {
  ForwardOptions options{attention, arithmetic, 1};
  options.key_tree_from_row = tree_from;
  return ForwardPass(n, options);
}

constexpr Arithmetic kArithmetics[] = {Arithmetic::Float32, Arithmetic::Float64Accumulate,
                                       Arithmetic::Float64};
constexpr AttentionKind kAttentions[] = {AttentionKind::Softmax, AttentionKind::Hard,
                                         AttentionKind::Hardmax};

}  // namespace

TEST_CASE("key tree: maximum, keys above a floor and the latest maximum equal brute force") {
  std::mt19937_64 rng(401);
  int rows = 0;
  for (int round = 0; round < 60; ++round) {
    const int qd = 1 + static_cast<int>(rng() % 6);
    const int n = 1 + static_cast<int>(rng() % 3000);
    // Keys from a few values per dim (ties and repeated scores), or ±1 codes, or anything, or
    // (cos, sin) pairs on circles (the position phases; the tree bounds those pairs by arcs):
    // turning with j at a random period, or at random angles, with a random radius a pair, and
    // now and then a key at the origin.
    Rows kt(qd, (n + 15) / 16 * 16);
    kt.setZero();
    for (int k = 0; k < qd; ++k)
      for (int j = 0; j < n; ++j)
        kt(k, j) = round % 4 == 0   ? static_cast<double>(rng() % 3)
                   : round % 4 == 1 ? ((j >> k) & 1 ? 1.0 : -1.0)
                                    : std::uniform_real_distribution<double>(-5, 5)(rng);
    if (round % 4 == 3)
      for (int k = 0; k + 1 < qd; k += 2) {
        const double radius = 1 + static_cast<double>(rng() % 4), period = 2 << (rng() % 12);
        const bool turning = rng() % 2 == 0;
        for (int j = 0; j < n; ++j) {
          const double angle = turning ? 2 * M_PI * j / period
                                       : std::uniform_real_distribution<double>(-M_PI, M_PI)(rng);
          const double r = rng() % 50 == 0 ? 0.0 : radius;
          kt(k, j) = r * std::cos(angle);
          kt(k + 1, j) = r * std::sin(angle);
        }
      }
    kernels::KeyTree tree;
    tree.build(kt, 0, n);
    const double scale = round % 4 == 0 ? -1.5 : 20.0;
    for (int trial = 0; trial < 10; ++trial) {
      std::vector<double> q(qd);
      for (auto& v : q) v = static_cast<double>(static_cast<int>(rng() % 5) - 2);
      const int last = static_cast<int>(rng() % n);
      auto score = [&](int j) {
        double dot = 0.0;
        for (int k = 0; k < qd; ++k) dot += q[k] * kt(k, j);
        return scale * dot;
      };
      auto leaf = [&](int p, double* out) {
        for (int t = 0; t < kernels::KeyTree::kLeaf; ++t) out[t] = score(16 * p + t);
      };
      const kernels::KeyTree::Query query(tree, q.data(), qd, scale, last, 0x1p-53);
      double max = score(0);
      int latest = 0;
      for (int j = 1; j <= last; ++j)
        if (score(j) >= max) {
          max = score(j);
          latest = j;
        }
      CHECK(tree.max_score(query, leaf) == max);
      CHECK(tree.latest_equal(query, max, leaf) == latest);
      const double floor = max - 2.0 * std::abs(scale);
      std::vector<int> expected, found;
      for (int j = 0; j <= last; ++j)
        if (score(j) >= floor) expected.push_back(j);
      tree.each_at_least(query, floor, leaf, [&](int j, double s) {
        CHECK(s == score(j));
        found.push_back(j);
      });
      CHECK(found == expected);
      ++rows;
    }
  }
  CHECK(rows == 600);
}

// The integer-coordinate scan fetches position t - k by its phase code: (cos, sin) of t at
// periods 4 .. 2^15 with sharpness lambda = 20, a period-2 cosine, and a BOS dimension whose query
// is lambda_bos (k + 0.5 - t), some -6e6 here, against a key that is 1 at BOS and 0 after. Of
// 10,001 causal keys only 16 have softmax terms that are not exact zeros; the tree must find
// them, and no more than a few dozen leaves (measured: 38 with the arcs, 93 with boxes alone;
// a rounding margin as large as the BOS product visited every leaf).
TEST_CASE("key tree: a phase-code fetch visits a few dozen leaves of 16,385 keys") {
  const int T = 16385, bits = 15, qd = 2 * bits;
  Rows kt(qd, (T + 15) / 16 * 16);
  kt.setZero();
  auto angle = [](long t, int b) { return 2 * M_PI * double(t) / double(1L << (b + 1)); };
  for (int s = 0; s < T; ++s) {
    kt(0, s) = std::cos(M_PI * s);
    for (int b = 1; b < bits; ++b) {
      kt(2 * b - 1, s) = static_cast<float>(std::cos(angle(s, b)));
      kt(2 * b, s) = static_cast<float>(std::sin(angle(s, b)));
    }
    kt(qd - 1, s) = s == 0;
  }
  kernels::KeyTree tree;
  tree.build(kt, 0, T);
  const double lambda = 20.0;
  for (int t : {3000, 10000, 16384}) {
    const int k = 1;
    std::vector<double> q(qd);
    q[0] = lambda * std::cos(M_PI * (t - k));
    for (int b = 1; b < bits; ++b) {
      q[2 * b - 1] = lambda * std::cos(angle(t - k, b));
      q[2 * b] = lambda * std::sin(angle(t - k, b));
    }
    q[qd - 1] = 2 * lambda * bits * (k + 0.5 - t);
    auto score = [&](int j) {
      double dot = 0.0;
      for (int d = 0; d < qd; ++d) dot += q[d] * kt(d, j);
      return dot;
    };
    int leaves = 0;
    auto leaf = [&](int p, double* out) {
      ++leaves;
      for (int i = 0; i < kernels::KeyTree::kLeaf; ++i)
        out[i] = 16 * p + i < T ? score(16 * p + i) : 0.0;
    };
    const kernels::KeyTree::Query query(tree, q.data(), qd, 1.0, t, 0x1p-53);
    const double max = tree.max_score(query, leaf);
    CHECK(max == score(t - k));
    leaves = 0;
    std::vector<int> found, expected;
    tree.each_at_least(query, max - 105.0, leaf, [&](int j, double) { found.push_back(j); });
    for (int j = 0; j <= t; ++j)
      if (score(j) >= max - 105.0) expected.push_back(j);
    CAPTURE(t);
    CHECK(found == expected);
    CHECK(expected.size() < 40);
    CHECK(leaves < 60);
  }
}

TEST_CASE("key tree: random networks give bitwise the logits of scoring every key") {
  std::mt19937_64 rng(402);
  int compared = 0;
  for (int i = 0; i < 20; ++i) {
    test::RandomNetworkShape shape;
    shape.max_len = 300;
    if (i % 4 == 3) shape.scale = 60.0f;
    const Automaton a = test::random_automaton(rng, 4, 3);
    const Network n = test::random_network(rng, a, shape);
    const auto word = test::random_word(rng, static_cast<int>(a.letter_count()), 300);
    for (Arithmetic arithmetic : kArithmetics)
      for (AttentionKind attention : kAttentions) {
        const Eigen::MatrixXd dense =
            pass_with_tree_from(n, attention, arithmetic, INT_MAX).run(word);
        CHECK(pass_with_tree_from(n, attention, arithmetic, 0).run(word) == dense);
        CHECK(pass_with_tree_from(n, attention, arithmetic, 100).run(word) == dense);
        ++compared;
      }
  }
  CHECK(compared == 20 * 3 * 3);
}

TEST_CASE("key tree: compiled networks (both strategies) give bitwise the logits of every key") {
  // Position-code lookups (scan steps, kr's fetches from t-1) and memory heads (latest
  // reset), the heads the tree exists for, at a length where the default uses it.
  // At KRC_TEST_SCALE < 1 a sample of the automata (test::scaled_sample: under the sanitizers
  // the nine passes over two words of 1500 letters take about a minute a network).
  std::mt19937_64 rng(403);
  const auto names = test::scaled_sample(
      std::vector<std::string>{"gridworld_9", "symmetric_4", "flipflop_3", "abab", "cyclic_3"});
  MESSAGE(names.size() << " of 5 automata, both strategies");
  for (const auto& name : names) {
    for (Strategy strategy : {Strategy::Kr, Strategy::Scan}) {
      CAPTURE(name);
      CAPTURE(static_cast<int>(strategy));
      const Automaton a = test::reference_automaton(name);
      CompileOptions options;
      options.strategy = strategy;
      options.max_len = 1500;
      const Network net = compile(a, options).network;
      const int letters = static_cast<int>(a.letter_count());
      for (const auto& word : {test::random_word(rng, letters, 1500),
                               std::vector<LetterId>(1500, static_cast<LetterId>(letters - 1))}) {
        for (Arithmetic arithmetic : kArithmetics)
          for (AttentionKind attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
            const Eigen::MatrixXd dense =
                pass_with_tree_from(net, attention, arithmetic, INT_MAX).run(word);
            CHECK(pass_with_tree_from(net, attention, arithmetic, 1024).run(word) == dense);
            CHECK(pass_with_tree_from(net, attention, arithmetic, 0).run(word) == dense);
          }
      }
    }
  }
}

TEST_CASE("key tree: compiled networks: a kr counter's block sums past 2048 through the tree") {
  // Past max-len 2048 a counter's average heads sum the increments of a block of about sqrt(T)
  // positions (kr_plan.cpp): every other key's term is an exact 0, which the tree skips. The
  // passes must equal scoring every key bit for bit, and the states must be the automaton's.
  std::mt19937_64 rng(404);
  const Automaton a = test::reference_automaton("symmetric_4");
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = 4096;
  const Network net = compile(a, options).network;
  const auto word = test::random_word(rng, static_cast<int>(a.letter_count()), 3000);
  int heads = 0, averages = 0;
  for (const auto& layer : net.layers)
    for (const auto& head : layer.heads) {
      ++heads;
      averages += head.kind == HeadKind::Average;
    }
  REQUIRE(averages > 0);  // the heads this test is for
  MESSAGE(averages << " of " << heads << " heads average");
  for (Arithmetic arithmetic : {Arithmetic::Float32, Arithmetic::Float64Accumulate}) {
    const Eigen::MatrixXd dense =
        pass_with_tree_from(net, AttentionKind::Softmax, arithmetic, INT_MAX).run(word);
    CHECK(pass_with_tree_from(net, AttentionKind::Softmax, arithmetic, 0).run(word) == dense);
    const std::vector<StateId> states = a.run(word);
    REQUIRE(static_cast<std::size_t>(dense.rows()) == states.size());
    for (std::size_t t = 0; t < states.size(); ++t) {
      Eigen::Index best = 0;
      dense.row(static_cast<Eigen::Index>(t)).maxCoeff(&best);
      CHECK(best == static_cast<Eigen::Index>(states[t]));
    }
  }
}
