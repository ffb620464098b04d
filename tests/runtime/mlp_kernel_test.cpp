// The sparse MLP kernel decides which hidden units to evaluate from bounds on small inputs;
// whatever the thresholds, it must give the dense formula's result.
#include <doctest/doctest.h>

#include "forward/forward_kernels.hpp"
#include "forward/prepared_network.hpp"
#include "random_network.hpp"

using namespace krc;

namespace {

// A value drawn from the kinds compiled activations hold: zeros, ordinary values, softmax
// traces, values near a unit's threshold.
double activation(std::mt19937_64& rng) {
  const double sign = rng() % 2 ? 1.0 : -1.0;
  switch (rng() % 5) {
    case 0:
    case 1:
      return 0.0;
    case 2:
      return sign * std::uniform_real_distribution<double>(0.1, 2.0)(rng);
    case 3:
      return sign * std::pow(10.0, -std::uniform_real_distribution<double>(5.0, 18.0)(rng));
    default:
      return sign * std::uniform_real_distribution<double>(0.0, 1e-3)(rng);
  }
}

float bias(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return 0.0f;
    case 1:
      return -1.0f;
    case 2:
      return static_cast<float>(
          -std::pow(10.0, -std::uniform_real_distribution<double>(3.0, 12.0)(rng)));
    default:
      return std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  }
}

}  // namespace

TEST_CASE("the sparse MLP kernel equals the dense formula for any small-input thresholds") {
  std::mt19937_64 rng(12);
  const std::pair<double, double> thresholds[] = {{0.0, 1e-2},  {1e-7, 1e-2}, {1e-7, 1e-12},
                                                  {1e-4, 1e-6}, {1.0, 1e-2},  {100.0, 1e-2},
                                                  {100.0, 1e9}};
  int cases = 0, shared_groups = 0;
  kernels::MlpScratch scratch;  // shared by all rounds: the kernel leaves it clean
  for (int round = 0; round < 60; ++round) {
    const int d = std::uniform_int_distribution<int>(2, 12)(rng);
    const int hidden = std::uniform_int_distribution<int>(0, 60)(rng);
    // Plus a staircase, as counters compile to: units ReLU(w x_c + b) on one input with one
    // weight and many biases (some repeated, some positive), which the kernel evaluates as
    // one group of shared-input units.
    const int steps = round % 3 == 0 ? 0 : std::uniform_int_distribution<int>(1, 30)(rng);
    const int all = hidden + steps;
    Mlp mlp;
    SparseMatrix random_in = test::random_sparse(rng, hidden, d, 0.2);
    std::vector<Eigen::Triplet<float, int>> in;
    for (int u = 0; u < random_in.outerSize(); ++u)
      for (SparseMatrix::InnerIterator it(random_in, u); it; ++it)
        in.emplace_back(u, it.col(), it.value());
    const int stair_input = static_cast<int>(rng() % d);
    const float stair_weight = rng() % 2 ? 4.0f : -0.5f;
    for (int k = 0; k < steps; ++k) in.emplace_back(hidden + k, stair_input, stair_weight);
    mlp.in_weight = SparseMatrix(all, d);
    mlp.in_weight.setFromTriplets(in.begin(), in.end());
    mlp.out_weight = test::random_sparse(rng, d, all, 0.3);
    mlp.in_bias = Eigen::VectorXf(all);
    for (int u = 0; u < hidden; ++u) mlp.in_bias[u] = bias(rng);
    for (int k = 0; k < steps; ++k)
      mlp.in_bias[hidden + k] =
          k % 7 == 6 ? 0.25f : -0.25f * static_cast<float>(k / 2) + (k % 5 == 0 ? 0.0f : 0.125f);
    mlp.out_bias = Eigen::VectorXf::Zero(d);
    if (round % 2) mlp.out_bias[0] = 0.5f;
    const int n = 20;
    kernels::Activations<double> x(n, d);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c) x(i, c) = activation(rng);
    for (int i = 0; i < n; i += 2)
      x(i, stair_input) = 0.125 * static_cast<double>(rng() % 40);  // on the steps

    // The dense formula.
    const Eigen::MatrixXd w1 = Eigen::MatrixXf(mlp.in_weight).cast<double>();
    const Eigen::MatrixXd w2 = Eigen::MatrixXf(mlp.out_weight).cast<double>();
    Eigen::MatrixXd pre = x * w1.transpose();
    pre.rowwise() += mlp.in_bias.cast<double>().transpose();
    Eigen::MatrixXd expected = x + pre.cwiseMax(0.0) * w2.transpose();
    expected.rowwise() += mlp.out_bias.cast<double>().transpose();

    for (const auto& [small_input, low_threshold] : thresholds) {
      CAPTURE(small_input);
      CAPTURE(low_threshold);
      const PreparedMlp prepared = prepare_mlp(mlp, small_input, low_threshold);
      shared_groups += static_cast<int>(prepared.shared_input.size());
      kernels::Activations<double> y = x;
      kernels::apply_mlp(prepared, y, 0, n, scratch);
      // Relative to each value's own size, so that tiny results count as much as large ones.
      for (int i = 0; i < n; ++i)
        for (int c = 0; c < d; ++c)
          CHECK(std::abs(y(i, c) - expected(i, c)) <= 1e-12 * (std::abs(expected(i, c)) + 1e-30));
      ++cases;
    }
  }
  CHECK(cases == 60 * 7);
  CHECK(shared_groups > 0);
}
