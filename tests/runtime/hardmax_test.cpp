// AttentionKind::Hardmax: every head, average ones included, puts weight 1/|M| on the positions
// M of its maximal score (Yun et al. 2020, Kajitsuka & Sato 2024). Oracles: the average of the
// value rows over M, computed by brute force on a hand-built network; the automaton, for the
// counterexample Kajitsuka & Sato's negative result predicts on a counter.
#include <doctest/doctest.h>

#include <random>

#include "krc/automata/automaton_json.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/verifier.hpp"
#include "random_network.hpp"
#include "reset_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// Dims 0-3: the token one-hot (<bos>, a, b, c); dim 4: a constant 1; dims 5-8: the head's
// output. One head: query 1 (dim 4), key [token is b or c], value the token one-hot written to
// dims 5-8, which the unembedding reads as the four "states". Scores: `scale` at b and c, 0
// elsewhere, so the maxima are the b and c positions, or every position while there is none.
Network tie_network(HeadKind kind, int max_len, float scale) {
  Network n;
  n.max_len = max_len;
  n.vocabulary = {"<bos>", "a", "b", "c"};
  n.states = {"s0", "s1", "s2", "s3"};
  n.automaton = automaton_to_json(test::reset_automaton({"a", "b", "c"}, {1, 2, 3}, 4));
  for (int c = 0; c < 9; ++c) n.residual_labels.push_back("dim " + std::to_string(c));
  n.token_embedding = RowMatrix::Zero(4, 9);
  for (int t = 0; t < 4; ++t) n.token_embedding(t, t) = 1.0f;
  n.position_embedding = RowMatrix::Zero(max_len + 1, 9);
  n.position_embedding.col(4).setOnes();
  n.attention_scale = scale;
  AttentionHead head;
  head.name = "ties";
  head.kind = kind;
  head.query = SparseMatrix(9, 1);
  head.query.insert(4, 0) = 1.0f;
  head.key = SparseMatrix(9, 1);
  head.key.insert(2, 0) = 1.0f;
  head.key.insert(3, 0) = 1.0f;
  head.value = SparseMatrix(9, 4);
  head.output = SparseMatrix(4, 9);
  n.unembedding = SparseMatrix(9, 4);
  for (int t = 0; t < 4; ++t) {
    head.value.insert(t, t) = 1.0f;
    head.output.insert(t, 5 + t) = 1.0f;
    n.unembedding.insert(5 + t, t) = 1.0f;
  }
  Layer layer;
  layer.heads.push_back(head);
  n.layers.push_back(layer);
  n.check_shapes();
  return n;
}

// The hardmax output at every prefix, by brute force: the mean token one-hot over the b and c
// positions so far, or over every position while there is none.
Eigen::MatrixXd expected_hardmax(const std::vector<LetterId>& word) {
  const int n = static_cast<int>(word.size()) + 1;
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(n, 4);
  for (int t = 0; t < n; ++t) {
    std::vector<int> maxima;
    for (int j = 1; j <= t; ++j)
      if (word[j - 1] >= 1) maxima.push_back(j);
    if (maxima.empty())
      for (int j = 0; j <= t; ++j) maxima.push_back(j);
    for (int j : maxima) out(t, j == 0 ? 0 : word[j - 1] + 1) += 1.0 / maxima.size();
  }
  return out;
}

}  // namespace

TEST_CASE("hardmax: select and average heads share the weight uniformly among tied maxima") {
  std::mt19937_64 rng(501);
  int words = 0;
  for (HeadKind kind : {HeadKind::Select, HeadKind::Average}) {
    const Network n = tie_network(kind, 1500, 3.0f);
    for (int length : {0, 1, 5, 40, 1500}) {
      // Few b and c letters, so that long stretches have none.
      std::vector<LetterId> word(length);
      for (auto& a : word) a = rng() % 10 == 0 ? static_cast<LetterId>(1 + rng() % 2) : 0;
      const Eigen::MatrixXd expected = expected_hardmax(word);
      for (Arithmetic arithmetic :
           {Arithmetic::Float32, Arithmetic::Float64Accumulate, Arithmetic::Float64}) {
        const Eigen::MatrixXd logits =
            ForwardPass(n, {AttentionKind::Hardmax, arithmetic, 1}).run(word);
        CAPTURE(length);
        CHECK((logits - expected).cwiseAbs().maxCoeff() <= 1e-6);
      }
      // Hard attention differs: a select head takes the latest maximum alone, an average head
      // keeps softmax, whose weights e^3 : 1 are not the hardmax's.
      if (length > 5) {
        const Eigen::MatrixXd hard =
            ForwardPass(n, {AttentionKind::Hard, Arithmetic::Float64, 1}).run(word);
        CHECK((hard - expected).cwiseAbs().maxCoeff() > 1e-3);
      }
      ++words;
    }
  }
  CHECK(words == 10);
}

TEST_CASE("hardmax: a counter loses its count, as Kajitsuka and Sato's negative result predicts") {
  // kr parity is one counter: a head scoring ln(N + 1 - t) on BOS and 0 elsewhere, whose
  // softmax weights every position 1/(N + 1). Its hardmax sees BOS alone, so the count is 0 and
  // the state stays `even`: the first word with a 1 fails at its last letter.
  const Automaton parity = test::reference_automaton("parity");
  CompileOptions compile_options;
  compile_options.strategy = Strategy::Kr;
  compile_options.max_len = 64;
  const Network net = compile(parity, compile_options).network;
  VerifyOptions options;
  options.exhaustive_length = 6;
  options.random_words = 10;
  for (Arithmetic arithmetic : {Arithmetic::Float32, Arithmetic::Float64Accumulate}) {
    options.forward = {AttentionKind::Softmax, arithmetic, 1};
    CHECK(verify(net, parity, options).ok());
    options.forward.attention = AttentionKind::Hardmax;
    const VerifyReport report = verify(net, parity, options);
    REQUIRE(!report.ok());
    REQUIRE(report.counterexample);
    const Counterexample& c = *report.counterexample;
    CHECK(c.first_error.part == VerifyPart::Exhaustive);
    CHECK(c.first_error.word == 1);  // 000001, the first word in lexicographic order with a 1
    CHECK(c.first_error.position == 6);
    CHECK(c.word == std::vector<LetterId>{0, 0, 0, 0, 0, 1});
    CHECK(parity.state_name(c.expected[6]) == "odd");
    CHECK(parity.state_name(c.actual[6]) == "even");
    CHECK(format_report(report, parity).find("attention hardmax") != std::string::npos);
  }
}
