// tools/reference_forward.py, the numpy forward pass written from README alone, against the
// C++ forward pass on random networks written dense, sparse and mixed.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/weights_file.hpp"
#include "random_network.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;

TEST_CASE("reference_forward.py agrees with the C++ forward pass on random networks") {
  std::mt19937_64 rng(31);
  test::TempDir dir;
  const WriteOptions::Storage storages[] = {
      WriteOptions::Storage::Dense, WriteOptions::Storage::Sparse, WriteOptions::Storage::Auto};
  long long compared = 0;
  for (int i = 0; i < 6; ++i) {
    test::RandomNetworkShape shape;
    shape.max_len = i % 2 ? 80 : 10;
    Automaton a = test::random_automaton(rng, 5, 3);
    Network n = test::random_network(rng, a, shape);
    const std::string model = (dir / ("model" + std::to_string(i) + ".safetensors")).string();
    std::ofstream(model, std::ios::binary) << network_to_safetensors(n, {storages[i % 3]});
    std::vector<std::vector<LetterId>> words{{}};
    for (int w = 0; w < 5; ++w)
      words.push_back(test::random_word(rng, static_cast<int>(a.letter_count()),
                                        std::uniform_int_distribution<int>(1, shape.max_len)(rng)));
    for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
      const auto script = test::run_reference_forward(
          dir, model, test::word_lines(n.vocabulary, words), {"--attention", to_string(attention)});
      REQUIRE(script.size() == words.size());
      ForwardPass pass(n, {attention, Arithmetic::Float64, 1});
      for (std::size_t w = 0; w < words.size(); ++w) {
        const Eigen::MatrixXd logits = pass.run(words[w]);
        REQUIRE(script[w]["states"].size() == static_cast<std::size_t>(logits.rows()));
        for (Eigen::Index t = 0; t < logits.rows(); ++t) {
          Eigen::Index best;
          const double top = logits.row(t).maxCoeff(&best);
          double second = -INFINITY;
          for (Eigen::Index s = 0; s < logits.cols(); ++s)
            if (s != best) second = std::max(second, logits(t, s));
          if (top - second < 1e-9 * (1 + std::abs(top))) continue;  // a tie: either answer is fair
          CHECK(script[w]["states"][t] == n.states[best]);
          ++compared;
        }
      }
    }
  }
  CHECK(compared > 500);
}

TEST_CASE("numpy in float32 and the Float32 arithmetic agree with the automaton on long words") {
  // Two independent plain float32 forward passes (numpy's BLAS order, krc's sequential one) on
  // compiled networks at lengths where float32 is still exact for them (README "In a plain
  // float32 framework"): a kr network with four counters and a scan network.
  std::mt19937_64 rng(32);
  test::TempDir dir;
  struct Case {
    const char* name;
    Strategy strategy;
    int max_len;
  };
  for (const Case& c :
       {Case{"symmetric_4", Strategy::Kr, 2048}, Case{"gridworld_4", Strategy::Scan, 2048}}) {
    CAPTURE(c.name);
    const Automaton a = test::reference_automaton(c.name);
    CompileOptions options;
    options.strategy = c.strategy;
    options.max_len = c.max_len;
    const Network n = compile(a, options).network;
    const std::string model = (dir / (std::string(c.name) + ".safetensors")).string();
    std::ofstream(model, std::ios::binary) << network_to_safetensors(n);
    const auto word = test::random_word(rng, static_cast<int>(a.letter_count()), c.max_len);
    const auto script = test::run_reference_forward(
        dir, model, test::word_lines(n.vocabulary, {word}), {"--float32"});
    REQUIRE(script.size() == 1);
    const std::vector<StateId> expected = a.run(word);
    const auto states = predict_states(n, {word}, {AttentionKind::Softmax, Arithmetic::Float32, 1});
    REQUIRE(states[0].size() == expected.size());
    REQUIRE(script[0]["states"].size() == expected.size());
    long long wrong = 0;
    for (std::size_t t = 0; t < expected.size(); ++t) {
      wrong += states[0][t] != expected[t];
      wrong += script[0]["states"][t] != a.state_name(expected[t]);
    }
    CHECK(wrong == 0);
  }
}
