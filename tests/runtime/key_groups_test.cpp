// Attention rows whose keys so far take few distinct values are summed over groups of equal
// keys (key_groups.cpp). Oracles: the plain dense forward pass of the test support, the
// automaton itself for compiled networks, a fresh run for rows reused from a previous word.
#include <doctest/doctest.h>

#include <cmath>

#include "forward/forward_kernels.hpp"
#include "forward/prepared_network.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "naive_forward.hpp"
#include "random_network.hpp"
#include "reset_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

double relative_difference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& oracle) {
  REQUIRE(a.rows() == oracle.rows());
  REQUIRE(a.cols() == oracle.cols());
  return (a - oracle).cwiseAbs().maxCoeff() / (1.0 + oracle.cwiseAbs().maxCoeff());
}

struct Case {
  Network network;
  std::vector<std::vector<LetterId>> words;
};

std::vector<Case> repeated_key_cases(std::uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    const int max_len = 200;
    Automaton a = test::random_automaton(rng, 4, 3);
    Case c{test::repeated_key_network(rng, a, max_len), {}};
    const int letters = static_cast<int>(a.letter_count());
    c.words.push_back(test::random_word(rng, letters, max_len));
    c.words.push_back(std::vector<LetterId>(max_len, 0));  // one key value after BOS
    for (int w = 0; w < 3; ++w)
      c.words.push_back(
          test::random_word(rng, letters, std::uniform_int_distribution<int>(0, max_len)(rng)));
    cases.push_back(std::move(c));
  }
  return cases;
}

// The forward pass through the kernels, as ForwardPass runs it, counting rows by path.
struct PathCounts {
  long long grouped = 0, dense = 0;
};
PathCounts count_paths(const Network& net, const std::vector<LetterId>& word,
                       const ForwardOptions& options) {
  const PreparedNetwork prepared(net);
  const int n = static_cast<int>(word.size()) + 1;
  kernels::Activations<double> x(n, net.d_model());
  for (int t = 0; t < n; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    x.row(t) = (net.token_embedding.row(token) + net.position_embedding.row(t)).cast<double>();
  }
  std::vector<kernels::LayerAttentionState> states(prepared.layers.size());
  kernels::AttentionScratch attention;
  kernels::MlpScratch mlp;
  for (std::size_t l = 0; l < prepared.layers.size(); ++l) {
    if (!prepared.layers[l].heads.empty())
      kernels::apply_attention(prepared.layers[l], prepared.scale, options, x, 0, n, states[l],
                               attention);
    if (prepared.layers[l].mlp) kernels::apply_mlp(*prepared.layers[l].mlp, x, 0, n, mlp);
  }
  return {attention.grouped_rows, attention.dense_rows};
}

int head_count(const Network& net) {
  int heads = 0;
  for (const auto& layer : net.layers) heads += static_cast<int>(layer.heads.size());
  return heads;
}

}  // namespace

TEST_CASE(
    "repeated keys: the grouped attention path equals the dense formula (softmax and hard, float64 "
    "and float32)") {
  int words = 0;
  for (const auto& c : repeated_key_cases(31, 12)) {
    for (const auto& word : c.words) {
      CAPTURE(word.size());
      for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
        const Eigen::MatrixXd oracle = test::naive_logits(c.network, word, attention);
        ForwardPass f64(c.network, {attention, Arithmetic::Float64, 1});
        CHECK(relative_difference(f64.run(word), oracle) <= 1e-12);
        ForwardPass f32(c.network, {attention, Arithmetic::Float64Accumulate, 1});
        CHECK(relative_difference(f32.run(word), oracle) <= 1e-5);
      }
      ++words;
    }
  }
  CHECK(words == 12 * 5);
}

TEST_CASE("repeated keys: every row past 16 x (distinct keys) takes the grouped path") {
  for (const auto& c : repeated_key_cases(32, 6)) {
    const int letters = static_cast<int>(c.network.vocabulary.size()) - 1;
    const int vocabulary = letters + 1;
    std::mt19937_64 rng(3);
    const auto word = test::random_word(rng, letters, c.network.max_len);
    const int n = static_cast<int>(word.size()) + 1;
    for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
      const PathCounts paths = count_paths(c.network, word, {attention, Arithmetic::Float64, 1});
      CHECK(paths.grouped + paths.dense == static_cast<long long>(head_count(c.network)) * n);
      // Keys take at most `vocabulary` values: rows t with t + 1 >= 16 * vocabulary are grouped.
      const int first_grouped = 16 * vocabulary - 1;
      CHECK(paths.grouped >= static_cast<long long>(head_count(c.network)) * (n - first_grouped));
    }
  }
}

TEST_CASE(
    "repeated keys: words sharing a prefix with the previous one get bitwise the logits of a fresh "
    "run") {
  for (auto arithmetic :
       {Arithmetic::Float32, Arithmetic::Float64Accumulate, Arithmetic::Float64}) {
    for (auto& c : repeated_key_cases(33, 4)) {
      std::mt19937_64 rng(9);
      const int letters = static_cast<int>(c.network.vocabulary.size()) - 1;
      const auto base = test::random_word(rng, letters, c.network.max_len);
      // Prefixes of one long word, cut at and around the grouping threshold, then changed
      // after the cut; shorter words after longer ones and the reverse.
      std::vector<std::vector<LetterId>> words{base};
      for (int cut : {150, 70, 63, 64, 10, 120, 199}) {
        auto w = std::vector<LetterId>(base.begin(), base.begin() + cut);
        words.push_back(w);
        w.push_back(static_cast<LetterId>((base[cut] + 1) % letters));
        for (int extra = 0; extra < 40 && static_cast<int>(w.size()) < c.network.max_len; ++extra)
          w.push_back(static_cast<LetterId>(rng() % letters));
        words.push_back(w);
      }
      words.push_back(base);
      for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard, AttentionKind::Hardmax}) {
        ForwardPass pass(c.network, {attention, arithmetic, 1});
        const auto batch = pass.run(words);
        for (std::size_t i = 0; i < words.size(); ++i) CHECK(batch[i] == pass.run(words[i]));
      }
    }
  }
}

TEST_CASE("compiled kr networks: logits equal the dense formula, states equal the automaton's") {
  std::mt19937_64 rng(2027);
  int compared = 0;
  for (const char* name : {"parity", "cyclic_5", "quaternion", "symmetric_4", "dihedral_4",
                           "gridworld_4", "abab", "flipflop_3"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    CompileOptions options;
    options.strategy = Strategy::Kr;
    options.max_len = 96;
    const Network net = compile(a, options).network;
    const int letters = static_cast<int>(a.letter_count());
    std::vector<std::vector<LetterId>> words{
        std::vector<LetterId>(96, 0), test::random_word(rng, letters, 96),
        test::random_word(rng, letters, 96), test::random_word(rng, letters, 41)};
    for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
      ForwardPass f64(net, {attention, Arithmetic::Float64, 1});
      ForwardPass f32(net, {attention, Arithmetic::Float64Accumulate, 1});
      for (const auto& word : words) {
        const Eigen::MatrixXd oracle = test::naive_logits(net, word, attention);
        CHECK(relative_difference(f64.run(word), oracle) <= 1e-12);
        CHECK(relative_difference(f32.run(word), oracle) <= 1e-5);
        const std::vector<StateId> expected = a.run(word);
        const std::vector<int> naive = test::naive_states(net, word, attention);
        for (const auto& predicted :
             {predict_states(net, {word}, {attention, Arithmetic::Float64Accumulate, 1})[0],
              predict_states(net, {word}, {attention, Arithmetic::Float64, 1})[0]}) {
          REQUIRE(predicted.size() == expected.size());
          for (std::size_t t = 0; t < expected.size(); ++t) {
            CHECK(predicted[t] == expected[t]);
            CHECK(naive[t] == static_cast<int>(expected[t]));
          }
        }
        ++compared;
      }
    }
  }
  CHECK(compared == 8 * 2 * 4);
}

TEST_CASE(
    "compiled kr networks: counter heads take the grouped path past row 31, lookups the dense "
    "one") {
  for (const char* name : {"cyclic_5", "quaternion", "symmetric_4"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    CompileOptions options;
    options.strategy = Strategy::Kr;
    options.max_len = 256;
    const Network net = compile(a, options).network;
    int counters = 0;
    for (const auto& layer : net.layers)
      for (const auto& head : layer.heads) counters += head.kind == HeadKind::Average;
    REQUIRE(counters > 0);
    std::mt19937_64 rng(4);
    const auto word = test::random_word(rng, static_cast<int>(a.letter_count()), 256);
    const PathCounts paths =
        count_paths(net, word, {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 1});
    // A counter's keys take two values (BOS and the rest): grouped from row 2 x 16 - 1 on.
    CHECK(paths.grouped >= static_cast<long long>(counters) * (257 - 31));
    // Position codes and memory keys are all distinct: those heads stay dense (all but their
    // first rows, which may be grouped only while t + 1 >= 16 x groups, never).
    CHECK(paths.dense >= static_cast<long long>(head_count(net) - counters) * 257);
  }
}

TEST_CASE("hard attention over key groups: ties go to the latest position") {
  // One select head whose key is the token and whose query is zero, so that the four groups
  // of keys all score 0 (reset_network.hpp).
  const Automaton last = test::last_letter_automaton();
  const Network n = test::last_letter_copy_network(300, true);

  std::mt19937_64 rng(8);
  std::vector<std::vector<LetterId>> words;
  for (int i = 0; i < 10; ++i) words.push_back(test::random_word(rng, 3, 300 - i));
  for (auto arithmetic : {Arithmetic::Float64Accumulate, Arithmetic::Float64}) {
    const auto predicted = predict_states(n, words, {AttentionKind::Hard, arithmetic, 2});
    for (std::size_t i = 0; i < words.size(); ++i) CHECK(predicted[i] == last.run(words[i]));
  }
  const PathCounts paths = count_paths(n, words[0], {AttentionKind::Hard, Arithmetic::Float64, 1});
  CHECK(paths.grouped >= 301 - 63);  // four key values: rows 63 on
}
