// Arithmetic::BFloat16 and Arithmetic::Float16 (README "bf16 and fp16"): the rounding against
// values worked out by hand from the formats' definitions, and the forward pass bit for bit
// against tools/reference_forward.py --bf16/--fp16, a numpy pass written from README alone, on
// random networks (every attention kind, an fp16 overflow included) and compiled networks.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "forward/narrow_format.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/weights_file.hpp"
#include "random_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// Runs `words` through krc and numpy in `arithmetic`; counts the logits that differ (NaN equals
// NaN) and the non-finite ones. Every logit must be a value of the format.
struct Comparison {
  long long compared = 0, differing = 0, nonfinite = 0;
};
Comparison compare_with_numpy(const Network& n, const std::vector<std::vector<LetterId>>& words,
                              Arithmetic arithmetic, AttentionKind attention) {
  test::TempDir dir;
  const std::string model = (dir / "model.safetensors").string();
  std::ofstream(model, std::ios::binary) << network_to_safetensors(n);
  const std::string flag = arithmetic == Arithmetic::BFloat16 ? "--bf16" : "--fp16";
  const auto script =
      test::run_reference_forward(dir, model, test::word_lines(n.vocabulary, words),
                                  {flag, "--logits", "--attention", to_string(attention)});
  REQUIRE(script.size() == words.size());
  const narrow::Rounding round = narrow::rounding_of(arithmetic);
  ForwardPass pass(n, {attention, arithmetic, 1});
  Comparison c;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const Eigen::MatrixXd logits = pass.run(words[w]);
    const auto& rows = script[w]["logits"];
    REQUIRE(rows.size() == static_cast<std::size_t>(logits.rows()));
    for (Eigen::Index t = 0; t < logits.rows(); ++t)
      for (Eigen::Index s = 0; s < logits.cols(); ++s) {
        const double mine = logits(t, s);
        const double numpy = std::strtod(rows[t][s].get<std::string>().c_str(), nullptr);
        const bool both_nan = std::isnan(mine) && std::isnan(numpy);
        c.differing += !(mine == numpy) && !both_nan;
        c.nonfinite += !std::isfinite(mine);
        if (std::isfinite(mine)) CHECK(round(static_cast<float>(mine)) == mine);
        ++c.compared;
      }
  }
  return c;
}

constexpr Arithmetic kNarrow[] = {Arithmetic::BFloat16, Arithmetic::Float16};

}  // namespace

TEST_CASE("bf16 and fp16 rounding: nearest, ties to even, overflow to infinity") {
  using narrow::round_bf16, narrow::round_fp16;
  // bf16 keeps 8 significant bits: the spacing above 1 is 2^-7.
  CHECK(round_bf16(1.0f + 0x1p-8f) == 1.0f);                       // a tie, to the even 1
  CHECK(round_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);         // a tie, to the even neighbour
  CHECK(round_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);  // past the tie: up
  CHECK(round_bf16(257.0f) == 256.0f);                             // integers stop at 256
  CHECK(round_bf16(3.0e38f) == 0x1.c4p+127f);       // 3e38 / 2^127 = 1.7632..., 226/128 = 1.765625
  CHECK(round_bf16(0x1.fep+127f) == 0x1.fep+127f);  // the largest finite bf16
  CHECK(std::isinf(round_bf16(0x1.ffp+127f)));      // the tie above it goes to even: 2^128
  CHECK(round_bf16(0x1.8p-133f) == 0x1p-132f);      // a subnormal tie, to even
  // fp16: 11 significant bits, largest finite 65504, overflow from 65520 on.
  CHECK(round_fp16(2049.0f) == 2048.0f);
  CHECK(round_fp16(2051.0f) == 2052.0f);
  CHECK(round_fp16(65519.0f) == 65504.0f);
  CHECK(std::isinf(round_fp16(65520.0f)));
  CHECK(round_fp16(0x1p-25f) == 0.0f);  // half the least subnormal 2^-24: a tie, to even 0
  CHECK(round_fp16(0x1.8p-24f) == 0x1p-23f);
  CHECK(std::isnan(round_bf16(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("bf16 and fp16 agree bit for bit with numpy on random networks") {
  std::mt19937_64 rng(41);
  long long compared = 0;
  for (int i = 0; i < 4; ++i) {
    test::RandomNetworkShape shape;
    shape.max_len = 30;
    const Automaton a = test::random_automaton(rng, 4, 3);
    const Network n = test::random_network(rng, a, shape);
    std::vector<std::vector<LetterId>> words{{}};
    for (int w = 0; w < 3; ++w)
      words.push_back(test::random_word(rng, static_cast<int>(a.letter_count()), 30));
    for (Arithmetic arithmetic : kNarrow)
      for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard, AttentionKind::Hardmax}) {
        CAPTURE(i);
        CAPTURE(to_string(arithmetic));
        CAPTURE(to_string(attention));
        const Comparison c = compare_with_numpy(n, words, arithmetic, attention);
        CHECK(c.differing == 0);
        compared += c.compared;
      }
  }
  CHECK(compared > 2000);
}

TEST_CASE("an fp16 overflow gives infinities and NaNs, as numpy's does") {
  std::mt19937_64 rng(42);
  const Automaton a = test::random_automaton(rng, 4, 3);
  Network n = test::random_network(rng, a);
  n.token_embedding *= 4.0e4f;  // sums past 65504 in the first products
  std::vector<std::vector<LetterId>> words;
  for (int w = 0; w < 3; ++w)
    words.push_back(test::random_word(rng, static_cast<int>(a.letter_count()), 12));
  const Comparison c = compare_with_numpy(n, words, Arithmetic::Float16, AttentionKind::Softmax);
  CHECK(c.differing == 0);
  CHECK(c.nonfinite > 0);
  CHECK(compare_with_numpy(n, words, Arithmetic::BFloat16, AttentionKind::Softmax).nonfinite == 0);
}

TEST_CASE("bf16 and fp16 agree bit for bit with numpy on compiled networks") {
  std::mt19937_64 rng(43);
  struct Case {
    const char* name;
    Strategy strategy;
  };
  for (const Case& k : {Case{"parity", Strategy::Scan}, Case{"symmetric_3", Strategy::Scan},
                        Case{"symmetric_3", Strategy::Kr}, Case{"gridworld_4", Strategy::Kr}}) {
    CAPTURE(k.name);
    const Automaton a = test::reference_automaton(k.name);
    CompileOptions options;
    options.strategy = k.strategy;
    options.max_len = 48;
    const Network n = compile(a, options).network;
    const std::vector<std::vector<LetterId>> words{
        test::random_word(rng, static_cast<int>(a.letter_count()), 48)};
    for (Arithmetic arithmetic : kNarrow) {
      CAPTURE(to_string(arithmetic));
      CHECK(compare_with_numpy(n, words, arithmetic, AttentionKind::Softmax).differing == 0);
    }
  }
}
