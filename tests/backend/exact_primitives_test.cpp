// The float32-exact primitives (primitives/exact_attention.hpp, integer_comb.hpp), each alone
// in a hand-built program, run by a plain float32 forward pass that sums term by term
// (tests/support/float32_forward.hpp) and required to give the exact integers they promise,
// bit for bit; the float64 dense pass must agree to within its own rounding.
#include <doctest/doctest.h>

#include <random>

#include "float32_forward.hpp"
#include "ir/assemble.hpp"
#include "ir/schedule.hpp"
#include "naive_forward.hpp"
#include "primitives/exact_attention.hpp"
#include "primitives/features.hpp"
#include "primitives/integer_comb.hpp"
#include "primitives/residue.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// Letters a, b, c (tokens 1, 2, 3) with one dummy state.
struct Chamber {
  explicit Chamber(int max_len)
      : program({"<bos>", "a", "b", "c"}, {"q"}, max_len), features(program) {}
  Program program;
  Features features;
  Network network() const { return assemble(program, schedule(program)); }
};

std::vector<LetterId> random_word(std::mt19937_64& rng, int length) {
  std::uniform_int_distribution<LetterId> letter(0, 2);
  std::vector<LetterId> w(length);
  for (auto& l : w) l = letter(rng);
  return w;
}

// Words that push a sum to its extremes: all a, all b, and random.
std::vector<std::vector<LetterId>> test_words(std::mt19937_64& rng, int length) {
  return {std::vector<LetterId>(length, 0), std::vector<LetterId>(length, 1),
          random_word(rng, length), random_word(rng, length)};
}

}  // namespace

TEST_CASE("exact primitives: dyadic heads sum the letters' values exactly in float32") {
  // a = +3, b = -1, c = 0; lengths around powers of two and the longest (the naive
  // passes are quadratic: the sanitizer build, at KRC_TEST_SCALE < 1, stops at 1000).
  std::vector<int> lengths{1, 7, 64, 1000};
  if (test::test_scale() == 1.0) lengths.push_back(8192);
  for (int max_len : lengths) {
    CAPTURE(max_len);
    Chamber c(max_len);
    const Subspace tokens = c.features.tokens();
    std::vector<int> parts;
    for (int k = 0; k < c.features.code_bits(); ++k)
      parts.push_back(c.program.layout().allocate_scalar("part " + std::to_string(k)).offset);
    for (auto& head : dyadic_sum_heads(c.features, {{tokens[0], 3.0f}, {tokens[1], -1.0f}}, parts,
                                       "sum", Role{RoleKind::WalkSum}))
      c.program.add(std::move(head), "sum");
    const Network net = c.network();
    CHECK(net.layers.size() == 1);
    CHECK(net.layers[0].heads.size() == parts.size());
    std::mt19937_64 rng(max_len);
    // The float32 pass is quadratic in the length: at 8192 one word, the others all four.
    auto words = test_words(rng, max_len);
    if (max_len > 1000) words.resize(1);
    for (const auto& word : words) {
      const RowMatrix x = test::float32_residual(net, word);
      const Eigen::MatrixXd y = test::naive_residual(net, word);
      long long sum = 0;
      for (int t = 0; t <= max_len; ++t) {
        CAPTURE(t);
        if (t > 0) sum += word[t - 1] == 0 ? 3 : word[t - 1] == 1 ? -1 : 0;
        float total = 0.0f;
        double total64 = 0.0;
        for (int k = 0; k < static_cast<int>(parts.size()); ++k) {
          // Head k adds the block of bit k of t, and nothing when the bit is clear.
          const float part = x(t, parts[k]);
          CHECK(part == std::round(part));
          if (!((t >> k) & 1)) CHECK(part == 0.0f);
          total += part;
          total64 += y(t, parts[k]);
        }
        REQUIRE(total == static_cast<float>(sum));
        REQUIRE(total64 == doctest::Approx(static_cast<double>(sum)).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("exact primitives: the exact latest-flagged head copies with weight exactly 1") {
  // Flag: the letter is c (BOS flagged too); copy t's position and a value that is 5 at BOS.
  std::vector<int> lengths{9, 300};
  if (test::test_scale() == 1.0) lengths.push_back(4000);  // quadratic naive passes, as above
  for (int max_len : lengths) {
    CAPTURE(max_len);
    Chamber c(max_len);
    const Subspace tokens = c.features.tokens(), bos = c.features.bos();
    const Subspace copied = c.program.layout().allocate_scalar("copied");
    c.program.add(exact_latest_flagged(
                      c.features, {{tokens[2], 1.0f}, {bos[0], 1.0f}},
                      {{c.features.position()[0], copied[0], 1.0f}, {bos[0], copied[0], 5.0f}},
                      "latest c", Role{RoleKind::LatestVisit}),
                  "copy");
    const Network net = c.network();
    std::mt19937_64 rng(max_len);
    for (const auto& word : test_words(rng, std::min(max_len, 1500))) {
      const RowMatrix x = test::float32_residual(net, word);
      const RowMatrix hard = test::float32_residual(net, word, AttentionKind::Hard);
      int latest = 0;
      for (int t = 0; t <= static_cast<int>(word.size()); ++t) {
        CAPTURE(t);
        if (t > 0 && word[t - 1] == 2) latest = t;
        const float expected = latest == 0 ? 5.0f : static_cast<float>(latest);
        REQUIRE(x(t, copied[0]) == expected);
        REQUIRE(hard(t, copied[0]) == expected);
      }
    }
  }
}

TEST_CASE("exact primitives: an integer comb writes any function of an integer exactly") {
  // z = 7 (#a - #b) over the prefix (dyadic heads), f(m) = (m mod 5, m^2 mod 3, [m = 14]),
  // and the same gated by the letter c.
  Chamber c(600);
  const Subspace tokens = c.features.tokens();
  std::vector<int> parts;
  for (int k = 0; k < c.features.code_bits(); ++k)
    parts.push_back(c.program.layout().allocate_scalar("part " + std::to_string(k)).offset);
  for (auto& head : dyadic_sum_heads(c.features, {{tokens[0], 7.0f}, {tokens[1], -7.0f}}, parts,
                                     "sum", Role{RoleKind::WalkSum}))
    c.program.add(std::move(head), "sum");
  const Subspace out = c.program.layout().allocate("f", {"m mod 5", "m^2 mod 3", "m = 14"});
  const Subspace gated = c.program.layout().allocate("gated f", {"m mod 5", "m^2 mod 3", "m = 14"});
  IntegerInput z{{}, -7 * 600, 7 * 600, c.features.one()[0]};
  for (int p : parts) z.z.emplace_back(p, 1.0f);
  auto f = [](const Subspace& s) {
    return [&s](long long m) {
      Terms t{{s[0], static_cast<float>(((m % 5) + 5) % 5)},
              {s[1], static_cast<float>((m * m) % 3)}};
      if (m == 14) t.emplace_back(s[2], 1.0f);
      return t;
    };
  };
  MlpOp mlp;
  mlp.name = "f";
  add_integer_function(mlp, z, f(out));
  CHECK(mlp.units == integer_function_units(z, f(out)));
  const Terms gate{{tokens[2], 1.0f}};
  add_integer_function(mlp, z, f(gated), &gate);
  c.program.add(std::move(mlp), "f");
  const Network net = c.network();
  std::mt19937_64 rng(3);
  for (const auto& word : test_words(rng, 600)) {
    const RowMatrix x = test::float32_residual(net, word);
    long long m = 0;
    for (int t = 0; t <= 600; ++t) {
      CAPTURE(t);
      if (t > 0) m += word[t - 1] == 0 ? 7 : word[t - 1] == 1 ? -7 : 0;
      const bool open = t > 0 && word[t - 1] == 2;
      const float expected[3] = {static_cast<float>(((m % 5) + 5) % 5),
                                 static_cast<float>((m * m) % 3), m == 14 ? 1.0f : 0.0f};
      for (int i = 0; i < 3; ++i) {
        REQUIRE(x(t, out[i]) == expected[i]);
        REQUIRE(x(t, gated[i]) == (open ? expected[i] : 0.0f));
      }
    }
  }
}

namespace {

// One output of an MLP at one input x, float32: each pre-activation summed over the unit's
// inputs in order, then the bias; the output's terms fl(w h) summed either in unit order or
// over `lanes` strided accumulators (unit u into lane u mod lanes), the lanes then in order:
// how a SIMD dot product over the hidden units sums (MKL's sgemm for fewer than 16 rows).
float mlp_output(const MlpOp& mlp, const std::vector<float>& x, int dim, int lanes) {
  std::vector<float> pre(mlp.units, 0.0f);
  for (const Entry& e : mlp.in) pre[e.row] += e.value * x[e.col];
  std::vector<float> acc(lanes, 0.0f);
  for (const Entry& e : mlp.out)
    if (e.row == dim) {
      const float h = std::max(0.0f, pre[e.col] + mlp.bias[e.col]);
      acc[e.col % lanes] += e.value * h;
    }
  float sum = 0.0f;
  for (float a : acc) sum += a;
  return sum;
}

}  // namespace

TEST_CASE("residue comb: exact in unit order at any count, in any order only below 2^23") {
  // Issue 36: a comb reading a dyadic count of up to 16384 (Z2, max-len 16384) is exact
  // summed in unit order, but its output terms' magnitudes add up to 2^29, and summed in 16
  // strided lanes it writes -100 for the residue one-hot's 1. A comb of counts up to 256 (what
  // blocks of 128 read at max-len 16384) stays far below 2^23: exact in any order.
  auto value_of = [](int r) { return Terms{{2 + r, 1.0f}}; };  // dims: 0 z, 1 one, 2.. out
  for (long max_value : {16384L, 256L}) {
    CAPTURE(max_value);
    MlpOp mlp;
    add_comb_units(mlp, {{{0, 1.0f}}, max_value, 1}, 2, value_of);
    const double magnitude = comb_output_magnitude(max_value, 2, value_of);
    CHECK(magnitude <= comb_output_magnitude_bound(max_value, 2));
    bool strided_exact = true;
    for (long z : {max_value, max_value - 1, max_value / 2 + 1}) {
      CAPTURE(z);
      const std::vector<float> x{static_cast<float>(z), 1.0f, 0.0f, 0.0f};
      for (int r = 0; r < 2; ++r) {
        const float want = z % 2 == r ? 1.0f : 0.0f;
        CHECK(mlp_output(mlp, x, 2 + r, 1) == want);
        strided_exact = strided_exact && mlp_output(mlp, x, 2 + r, 16) == want;
      }
    }
    if (max_value == 256) {
      CHECK(magnitude <= kAnyOrderExactSum);
      CHECK(strided_exact);
    } else {
      CHECK(magnitude > 32 * kAnyOrderExactSum);
      CHECK_FALSE(strided_exact);
    }
  }
  // The plan's criterion: past max-len 2048 no dyadic count's comb is exact in any order.
  CHECK(comb_output_magnitude_bound(2049, 2) > kAnyOrderExactSum);
}
