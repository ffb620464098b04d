#include "krc/runtime/forward.hpp"

#include <doctest/doctest.h>

#include "krc/automata/automaton_json.hpp"
#include "naive_forward.hpp"
#include "random_network.hpp"
#include "reset_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// Largest |a - b| relative to the size of the oracle's logits.
double relative_difference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& oracle) {
  REQUIRE(a.rows() == oracle.rows());
  REQUIRE(a.cols() == oracle.cols());
  return (a - oracle).cwiseAbs().maxCoeff() / (1.0 + oracle.cwiseAbs().maxCoeff());
}

struct Case {
  Network network;
  std::vector<std::vector<LetterId>> words;
};

// Random networks with random words of every length up to max_len (some longer than one
// 64-row query block).
std::vector<Case> random_cases(std::uint64_t seed, int count, test::RandomNetworkShape shape = {}) {
  std::mt19937_64 rng(seed);
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    shape.max_len = i % 3 == 0 ? 150 : 12;
    Automaton a = test::random_automaton(rng, 4, 3);
    Case c{test::random_network(rng, a, shape), {}};
    for (int w = 0; w < 6; ++w) {
      int length = std::uniform_int_distribution<int>(0, shape.max_len)(rng);
      c.words.push_back(test::random_word(rng, static_cast<int>(a.letter_count()), length));
    }
    c.words.push_back({});
    cases.push_back(std::move(c));
  }
  return cases;
}

void check_against_naive(AttentionKind attention, Arithmetic arithmetic, double tolerance,
                         const test::RandomNetworkShape& shape = {}) {
  for (const auto& c : random_cases(17 + static_cast<int>(attention), 30, shape)) {
    ForwardPass pass(c.network, {attention, arithmetic, 1});
    for (const auto& word : c.words) {
      CAPTURE(word.size());
      CHECK(relative_difference(pass.run(word), test::naive_logits(c.network, word, attention)) <=
            tolerance);
    }
  }
}

}  // namespace

TEST_CASE("float64 forward pass equals the naive dense formula (softmax attention)") {
  check_against_naive(AttentionKind::Softmax, Arithmetic::Float64, 1e-12);
}

TEST_CASE("float64 forward pass equals the naive dense formula (hard attention)") {
  check_against_naive(AttentionKind::Hard, Arithmetic::Float64, 1e-12);
}

TEST_CASE("float64 forward pass equals the naive dense formula (hardmax attention)") {
  check_against_naive(AttentionKind::Hardmax, Arithmetic::Float64, 1e-12);
}

TEST_CASE("float32 forward pass agrees with the naive formula within float32 tolerance") {
  check_against_naive(AttentionKind::Softmax, Arithmetic::Float64Accumulate, 1e-5);
}

TEST_CASE("a large attention scale: skipping negligible softmax terms keeps the result") {
  test::RandomNetworkShape sharp;
  sharp.scale = 80.0f;  // most terms fall below exp(-104)
  check_against_naive(AttentionKind::Softmax, Arithmetic::Float64Accumulate, 1e-5, sharp);
  check_against_naive(AttentionKind::Softmax, Arithmetic::Float64, 1e-12, sharp);
}

TEST_CASE("MLP units that only tiny inputs can activate are still evaluated") {
  // ReLU is positively homogeneous: scaling embeddings and biases by 1e-9 scales every MLP
  // value, so all inputs fall below the kernel's "small" threshold and only its bound on
  // their total decides which units to evaluate. Attention goes nearly uniform; no matter.
  for (auto& c : random_cases(23, 20)) {
    Network& n = c.network;
    n.token_embedding *= 1e-9f;
    n.position_embedding *= 1e-9f;
    for (auto& layer : n.layers)
      if (layer.mlp) {
        layer.mlp->in_bias *= 1e-9f;
        layer.mlp->out_bias *= 1e-9f;
      }
    ForwardPass pass(n, {AttentionKind::Softmax, Arithmetic::Float64, 1});
    for (const auto& word : c.words) {
      Eigen::MatrixXd oracle = test::naive_logits(n, word, AttentionKind::Softmax);
      CHECK((pass.run(word) - oracle).cwiseAbs().maxCoeff() <= 1e-9 * oracle.cwiseAbs().maxCoeff());
    }
  }
}

TEST_CASE("float32 and float64 forward passes agree within tolerance") {
  for (const auto& c : random_cases(99, 20)) {
    ForwardPass f32(c.network, {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 1});
    ForwardPass f64(c.network, {AttentionKind::Softmax, Arithmetic::Float64, 1});
    for (const auto& word : c.words)
      CHECK(relative_difference(f32.run(word), f64.run(word)) <= 1e-5);
  }
}

TEST_CASE("hard attention breaks ties towards the latest position") {
  // One select head whose query is zero, so every score ties (reset_network.hpp).
  const Automaton last = test::last_letter_automaton();
  const Network n = test::last_letter_copy_network(40, false);

  std::mt19937_64 rng(5);
  std::vector<std::vector<LetterId>> words;
  for (int i = 0; i < 20; ++i) words.push_back(test::random_word(rng, 3, 1 + i));
  for (auto arithmetic : {Arithmetic::Float64Accumulate, Arithmetic::Float64}) {
    auto predicted = predict_states(n, words, {AttentionKind::Hard, arithmetic, 2});
    for (std::size_t i = 0; i < words.size(); ++i) CHECK(predicted[i] == last.run(words[i]));
  }
  // Under softmax the same head averages the tokens so far: the state is the most frequent
  // token, not the last one, on a word like "aab".
  auto averaged = predict_states(n, {{0, 0, 1}}, {AttentionKind::Softmax, Arithmetic::Float64, 1});
  CHECK(averaged[0].back() == 1);
  CHECK(last.run(std::vector<LetterId>{0, 0, 1}).back() == 2);
}

TEST_CASE("parallel runs give the same logits as one word at a time") {
  for (const auto& c : random_cases(7, 6)) {
    ForwardPass pass(c.network, {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 2});
    auto batch = pass.run(c.words);
    auto as_float = forward_logits(c.network, c.words,
                                   {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 2});
    auto states = predict_states(c.network, c.words,
                                 {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 2});
    REQUIRE(batch.size() == c.words.size());
    for (std::size_t i = 0; i < c.words.size(); ++i) {
      Eigen::MatrixXd alone = pass.run(c.words[i]);
      CHECK(batch[i] == alone);
      CHECK(as_float[i] == alone.cast<float>());
      for (Eigen::Index t = 0; t < alone.rows(); ++t) {
        // predict_states: the argmax (lowest index on ties).
        Eigen::Index best = 0;
        for (Eigen::Index s = 1; s < alone.cols(); ++s)
          if (alone(t, s) > alone(t, best)) best = s;
        CHECK(states[i][t] == best);
      }
    }
  }
}

TEST_CASE("words sharing a prefix with the previous one get bitwise the logits of a fresh run") {
  // A runner reuses the rows of the prefix a word shares with its predecessor; the batch
  // below is full of such prefixes (all words of length 5 in lexicographic order, then
  // shorter, longer and repeated words), and each word alone is a fresh run.
  for (auto arithmetic :
       {Arithmetic::Float32, Arithmetic::Float64Accumulate, Arithmetic::Float64}) {
    for (auto& c : random_cases(41, 8)) {
      const int letters = static_cast<int>(c.network.vocabulary.size()) - 1;
      std::vector<std::vector<LetterId>> words;
      std::vector<LetterId> word(5, 0);
      for (bool more = true; more;) {
        words.push_back(word);
        more = false;
        for (int i = 4; i >= 0 && !more; --i) {
          if (static_cast<int>(word[i]) + 1 < letters) {
            ++word[i];
            more = true;
          } else {
            word[i] = 0;
          }
        }
      }
      words.push_back({1 % static_cast<LetterId>(letters)});
      words.push_back(words.back());
      words.push_back(std::vector<LetterId>(std::min(c.network.max_len, 70), 0));
      words.push_back({});
      words.push_back(std::vector<LetterId>(std::min(c.network.max_len, 9), 0));
      for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard, AttentionKind::Hardmax}) {
        ForwardPass pass(c.network, {attention, arithmetic, 1});
        const auto batch = pass.run(words);
        for (std::size_t i = 0; i < words.size(); ++i) CHECK(batch[i] == pass.run(words[i]));
      }
    }
  }
}

TEST_CASE("words longer than max_len or with unknown letters are rejected") {
  auto cases = random_cases(3, 1);
  const Network& n = cases[0].network;
  ForwardPass pass(n);
  CHECK_THROWS_AS(pass.run(std::vector<LetterId>(n.max_len + 1, 0)), std::invalid_argument);
  CHECK_NOTHROW(pass.run(std::vector<LetterId>(n.max_len, 0)));
  const LetterId unknown = static_cast<LetterId>(n.vocabulary.size() - 1);
  CHECK_THROWS_AS(pass.run(std::vector<LetterId>{unknown}), std::invalid_argument);
}
