// Units that decode a sign pattern (a scan's compose units: ReLU(M (code(j) . x_q - b) + rest))
// are looked up by the row's signs instead of evaluated one by one (sign_pattern_units.hpp).
// The oracles: the same kernels with no groups formed, which must give the same bits (the
// lookup only skips units whose pre-activation is provably <= 0), and the dense formula.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>

#include "forward/float32_kernels.hpp"
#include "forward/forward_kernels.hpp"
#include "forward/prepared_network.hpp"

using namespace krc;

namespace {

struct DecodeMlp {
  Mlp mlp;
  int registers = 0, bits = 0, rest_dims = 0;
  int one = -1;  // the constant feature's input, if the biases ride on one
};

// `registers` registers of `bits` sign inputs each, then `rest_dims` digit inputs. Unit (q, j)
// reads register q with weights M code(j) (code bit set: +M), one digit with weight M/4 (or
// none), bias -M bits + delta (or delta, and weight -M bits on a constant feature, as compiled
// networks carry their biases: an input every unit reads alike); plus a few units of other
// magnitudes on the same inputs, which must not join a group, and output weights to random dims.
DecodeMlp decode_mlp(std::mt19937_64& rng, float magnitude, float delta, bool constant_feature) {
  DecodeMlp d;
  d.registers = std::uniform_int_distribution<int>(1, 4)(rng);
  d.bits = std::uniform_int_distribution<int>(2, 6)(rng);
  d.rest_dims = std::uniform_int_distribution<int>(0, 5)(rng);
  if (constant_feature) d.one = d.registers * d.bits + d.rest_dims;
  const int inputs = d.registers * d.bits + d.rest_dims + (constant_feature ? 1 : 0);
  std::vector<Eigen::Triplet<float, int>> in, out;
  std::vector<float> bias;
  auto add_unit = [&](int q, int code, float m, float b) {
    const int u = static_cast<int>(bias.size());
    for (int k = 0; k < d.bits; ++k) in.emplace_back(u, q * d.bits + k, (code >> k) & 1 ? m : -m);
    if (d.rest_dims > 0 && rng() % 4 != 0)  // below M: the pattern inputs are M's alone
      in.emplace_back(u, d.registers * d.bits + static_cast<int>(rng() % d.rest_dims), m / 4);
    if (d.one >= 0 && b < 0.0f) {
      in.emplace_back(u, d.one, -m * static_cast<float>(d.bits));
      b += m * static_cast<float>(d.bits);
    }
    bias.push_back(b);
    for (int o = 0; o < 2; ++o)
      out.emplace_back(static_cast<int>(rng() % inputs), u, rng() % 2 ? 1.0f : -2.0f);
  };
  for (int q = 0; q < d.registers; ++q) {
    for (int code = 0; code < (1 << d.bits); ++code)
      add_unit(q, code, magnitude, -magnitude * static_cast<float>(d.bits) + delta);
    add_unit(q, static_cast<int>(rng() % (1 << d.bits)), 2.0f * magnitude, -0.5f);
  }
  const int hidden = static_cast<int>(bias.size());
  d.mlp.in_weight = SparseMatrix(hidden, inputs);
  d.mlp.in_weight.setFromTriplets(in.begin(), in.end());
  d.mlp.out_weight = SparseMatrix(inputs, hidden);
  d.mlp.out_weight.setFromTriplets(out.begin(), out.end());
  d.mlp.in_bias = Eigen::Map<Eigen::VectorXf>(bias.data(), hidden);
  d.mlp.out_bias = Eigen::VectorXf::Zero(inputs);
  return d;
}

// Rows as compiled networks hold them (bits of +-1, small digits), and the ones the bound must
// refuse: a zero or tiny bit, a bit of another size, a large digit.
float input(std::mt19937_64& rng, bool is_bit) {
  const float sign = rng() % 2 ? 1.0f : -1.0f;
  const int kind = static_cast<int>(rng() % 40);
  if (is_bit) {
    if (kind == 0) return 0.0f;
    if (kind == 1) return sign * 1e-9f;
    if (kind == 2) return sign * 0.75f;
    return sign;
  }
  if (kind == 0) return 300.0f;
  return static_cast<float>(rng() % 4);
}

}  // namespace

TEST_CASE("sign-pattern units: the lookup gives the bits of evaluating every unit") {
  std::mt19937_64 rng(31);
  const std::pair<float, float> forms[] = {{1.0f, 0.0f},  {1.0f, 1.0f}, {32.0f, 31.0f},
                                           {0.5f, 0.25f}, {4.0f, 8.0f}, {32.0f, 0.0f}};
  long long f32_lookups = 0, f32_rows = 0, f64_lookups = 0, groups_formed = 0;
  for (int round = 0; round < 60; ++round) {
    const auto [magnitude, delta] = forms[round % std::size(forms)];
    CAPTURE(round);
    const DecodeMlp d = decode_mlp(rng, magnitude, delta, round % 2 == 1);
    const int inputs = static_cast<int>(d.mlp.in_weight.cols()), n = 40;
    kernels::Activations<float> x(n, inputs);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < inputs; ++c) x(i, c) = input(rng, c < d.registers * d.bits);
    if (d.one >= 0)
      for (int i = 0; i < n; ++i) x(i, d.one) = i % 10 == 9 ? 0.5f : 1.0f;

    const PreparedMlp grouped = prepare_mlp(d.mlp, 1e-7, 1e-2, 4);
    const PreparedMlp plain =
        prepare_mlp(d.mlp, 1e-7, 1e-2, std::numeric_limits<std::size_t>::max());
    REQUIRE(plain.sign_patterns.empty());
    groups_formed += static_cast<long long>(grouped.sign_patterns.size());
    for (const SignPatternUnits& g : grouped.sign_patterns) {
      CHECK(g.pattern_dims().size() == static_cast<std::size_t>(d.bits));
      CHECK(g.size() == static_cast<std::size_t>(1 << d.bits));  // the 2M unit stays out
    }

    // Float32: bit for bit the kernel that evaluates every unit.
    kernels::Activations<float> a = x, b = x;
    kernels::f32::MlpScratch sa, sb;
    kernels::f32::apply_mlp(grouped, a, 0, n, sa);
    kernels::f32::apply_mlp(plain, b, 0, n, sb);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < inputs; ++c) {
        CAPTURE(i);
        CAPTURE(c);
        REQUIRE(std::bit_cast<std::uint32_t>(a(i, c)) == std::bit_cast<std::uint32_t>(b(i, c)));
      }
    f32_lookups += sa.pattern_lookups;
    f32_rows += n * static_cast<long long>(grouped.sign_patterns.size());
    CHECK(sb.pattern_lookups == 0);

    // Float64: the dense formula.
    const Eigen::MatrixXd xd = x.cast<double>();
    const Eigen::MatrixXd w1 = Eigen::MatrixXf(d.mlp.in_weight).cast<double>();
    const Eigen::MatrixXd w2 = Eigen::MatrixXf(d.mlp.out_weight).cast<double>();
    Eigen::MatrixXd pre = xd * w1.transpose();
    pre.rowwise() += d.mlp.in_bias.cast<double>().transpose();
    const Eigen::MatrixXd expected = xd + pre.cwiseMax(0.0) * w2.transpose();
    // Up to the order of float64 additions: relative to the size of the terms summed.
    const Eigen::MatrixXd size = xd.cwiseAbs() + pre.cwiseMax(0.0) * w2.cwiseAbs().transpose();
    kernels::Activations<double> y = xd;
    kernels::MlpScratch sy;
    kernels::apply_mlp(grouped, y, 0, n, sy);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < inputs; ++c)
        CHECK(std::abs(y(i, c) - expected(i, c)) <= 1e-12 * (size(i, c) + 1e-30));
    f64_lookups += sy.pattern_lookups;
  }
  // Both ways were taken: most rows by lookup, the refused ones by evaluating every unit.
  CHECK(groups_formed >= 60);
  CHECK(f32_lookups > f32_rows / 4);
  CHECK(f32_lookups < f32_rows);
  CHECK(f64_lookups == f32_lookups);
}

TEST_CASE("sign-pattern units: the bound refuses where one mismatch need not cost enough") {
  // M (code . x - bits) + delta with delta >= 2M: one wrong bit leaves the unit positive, so
  // no row may be decided by its pattern, and the result is still every unit's.
  std::mt19937_64 rng(5);
  const DecodeMlp d = decode_mlp(rng, 1.0f, 2.0f, true);
  const PreparedMlp grouped = prepare_mlp(d.mlp, 1e-7, 1e-2, 4);
  REQUIRE(!grouped.sign_patterns.empty());
  const int inputs = static_cast<int>(d.mlp.in_weight.cols()), n = 16;
  kernels::Activations<float> x(n, inputs);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < inputs; ++c)
      x(i, c) = c < d.registers * d.bits ? (rng() % 2 ? 1.0f : -1.0f) : c == d.one ? 1.0f : 0.0f;
  kernels::f32::MlpScratch s;
  kernels::f32::apply_mlp(grouped, x, 0, n, s);
  CHECK(s.pattern_lookups == 0);
}
