// The integer-coordinate units summed in unit order (primitives/integer_compose.hpp, "In unit
// order"): every run of consecutive terms of one output stays within its bound, and at the
// largest n the planner accepts, the worst input summed in float32 sequentially and in blocks
// of consecutive units gives the exact composition. Oracle: the maps themselves (y_{x_q}) and
// the one-hot of g(f(q)), with sums in double over the same terms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ir/residual_layout.hpp"
#include "primitives/integer_compose.hpp"
#include "primitives/prefix_scan.hpp"

using namespace krc;

namespace {

// One output's terms w * ReLU(pre-activation) in unit order, pre-activations in float32 summed
// over the inputs and then the bias, as the runtime's float32 arithmetic does.
std::vector<std::vector<float>> terms_in_unit_order(const MlpOp& mlp, const std::vector<float>& x) {
  std::vector<float> pre(mlp.bias.size(), 0.0f);
  for (const Entry& e : mlp.in) pre[e.row] += e.value * x[e.col];
  for (std::size_t u = 0; u < pre.size(); ++u) pre[u] += mlp.bias[u];
  std::vector<std::vector<std::pair<int, float>>> by_output(x.size());
  for (const Entry& e : mlp.out)
    by_output[e.row].emplace_back(e.col, e.value * std::max(0.0f, pre[e.col]));
  std::vector<std::vector<float>> terms(x.size());
  for (std::size_t d = 0; d < x.size(); ++d) {
    std::sort(by_output[d].begin(), by_output[d].end());
    for (auto [unit, t] : by_output[d]) terms[d].push_back(t);
  }
  return terms;
}

double largest_run(const std::vector<float>& terms) {
  double best = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    double sum = 0;
    for (std::size_t j = i; j < terms.size(); ++j) best = std::max(best, std::abs(sum += terms[j]));
  }
  return best;
}

// Sequential, and blocks of `block` consecutive terms summed first (a blocked GEMM).
float blocked_sum(const std::vector<float>& terms, std::size_t block) {
  float total = 0;
  for (std::size_t i = 0; i < terms.size(); i += block) {
    float part = 0;
    for (std::size_t j = i; j < std::min(terms.size(), i + block); ++j) part += terms[j];
    total += part;
  }
  return total;
}

struct Stream {
  Stream(int n, const std::vector<int>& targets) {
    x = layout.allocate("x", std::vector<std::string>(n, "v"));
    y = layout.allocate("y", std::vector<std::string>(n, "v"));
    out = layout.allocate("out", std::vector<std::string>(n, "v"));
    add_integer_compose_units(compose, x, y, targets);
    add_integer_one_hot_units(one_hot, x[0], y, out);
  }
  ResidualLayout layout;
  Subspace x, y, out;
  MlpOp compose, one_hot;
};

}  // namespace

TEST_CASE("primitives: integer units' consecutive runs stay within their bounds") {
  std::mt19937_64 rng(11);
  for (int n : {2, 3, 5, 8}) {
    CAPTURE(n);
    std::vector<int> all(n);
    for (int q = 0; q < n; ++q) all[q] = q;
    Stream s(n, all);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<float> x(s.layout.width(), 0.0f);
      for (int q = 0; q < n; ++q) {
        x[s.x[q]] = trial == 0 ? 1.0f : float(1 + rng() % n);
        x[s.y[q]] = trial == 0 ? float(n) : float(1 + rng() % n);
      }
      const auto compose = terms_in_unit_order(s.compose, x);
      const auto one_hot = terms_in_unit_order(s.one_hot, x);
      for (int q = 0; q < n; ++q) {
        CHECK(largest_run(compose[s.y[q]]) <= integer_compose_run_bound(n));
        CHECK(largest_run(one_hot[s.out[q]]) <= integer_one_hot_run_bound(n));
      }
    }
  }
}

TEST_CASE("primitives: the integer form is exact in float32 in unit order up to 2047 states") {
  REQUIRE(integer_coordinates_exact(2047));
  CHECK_FALSE(integer_coordinates_exact(2048));
  CHECK(integer_coordinates_exact_any_order(202));
  CHECK_FALSE(integer_coordinates_exact_any_order(203));
  // The worst input for the compose units (x = 1, y = n) and a random one, at n = 2047 for two
  // targets; the one-hot units at 1024 (3 n^2 of them).
  std::mt19937_64 rng(12);
  for (int n : {2047, 1024}) {
    CAPTURE(n);
    Stream s(n, {0, n - 1});
    for (int trial = 0; trial < 2; ++trial) {
      std::vector<float> x(s.layout.width(), 0.0f);
      std::vector<int> g(n);
      for (int q = 0; q < n; ++q) {
        x[s.x[q]] = trial == 0 ? 1.0f : float(1 + rng() % n);
        g[q] = trial == 0 ? n : int(1 + rng() % n);
        x[s.y[q]] = float(g[q]);
      }
      const auto compose = terms_in_unit_order(s.compose, x);
      for (int q : {0, n - 1}) {
        const int expected = g[int(x[s.x[q]]) - 1];  // y_{x_q}
        for (std::size_t block : {std::size_t{1} << 30, std::size_t{16}, std::size_t{7}})
          CHECK(blocked_sum(compose[s.y[q]], block) + x[s.y[q]] == float(expected));
      }
      if (n > 1024) continue;
      const auto one_hot = terms_in_unit_order(s.one_hot, x);
      const int image = g[int(x[s.x[0]]) - 1];
      for (int v = 1; v <= n; ++v)
        for (std::size_t block : {std::size_t{1} << 30, std::size_t{16}})
          REQUIRE(blocked_sum(one_hot[s.out[v - 1]], block) == (v == image ? 1.0f : 0.0f));
    }
  }
}

TEST_CASE("primitives: the planner takes the integer form up to 2047 states") {
  for (int n : {2047, 2048}) {
    CAPTURE(n);
    PrefixScanSpec spec;
    spec.name = "scan";
    for (int q = 0; q < n; ++q) spec.set_labels.push_back(std::to_string(q));
    Transformation left(n), right(n);  // a clamped walk: about n^2/2 elements
    for (int q = 0; q < n; ++q) {
      left[q] = static_cast<StateId>(std::max(q - 1, 0));
      right[q] = static_cast<StateId>(std::min(q + 1, n - 1));
    }
    spec.symbols = {left, right};
    spec.symbol_labels = {"L", "R"};
    spec.max_elements = 1000;
    spec.max_units_per_step = 1LL << 40;
    const ScanPlan plan = plan_prefix_scan(spec, 1024).plan;
    CHECK(plan.form == (n <= 2047 ? ScanForm::IntegerCoordinates : ScanForm::StateMapOneHot));
  }
}
