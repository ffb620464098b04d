#include "primitives/residue.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace krc {

namespace {

int residue_of(long m, int p) { return static_cast<int>(((m % p) + p) % p); }

// Calls unit(b, outputs) for every unit of the comb for 0..max_value, in breakpoint order.
// Breakpoint b = k + 1/4 closes trapezoid k (-2) and opens trapezoid k+1 (+2);
// b = k - 1/4 closes the rise of trapezoid k (-2) and ends trapezoid k-1 (+2).
void for_each_comb_unit(long max_value, int p, const std::vector<Terms>& values,
                        const std::function<void(double b, const Terms& outputs)>& unit) {
  auto add = [&](double b, long minus, long plus) {
    std::map<int, float> weights;
    if (minus >= 0 && minus <= max_value)
      for (auto [dim, w] : values[residue_of(minus, p)]) weights[dim] -= 2.0f * w;
    if (plus >= 0 && plus <= max_value)
      for (auto [dim, w] : values[residue_of(plus, p)]) weights[dim] += 2.0f * w;
    Terms outputs;
    for (auto [dim, w] : weights)
      if (w != 0.0f) outputs.emplace_back(dim, w);
    if (!outputs.empty()) unit(b, outputs);
  };
  for (long k = -1; k <= max_value + 1; ++k) {
    if (k >= 0) add(static_cast<double>(k) - 0.25, k, k - 1);          // R(k - 1/4)
    if (k <= max_value) add(static_cast<double>(k) + 0.25, k, k + 1);  // R(k + 1/4)
  }
}

std::vector<Terms> values_of(int p, const std::function<Terms(int residue)>& value_of) {
  std::vector<Terms> values(p);
  for (int r = 0; r < p; ++r) values[r] = value_of(r);
  return values;
}

}  // namespace

void add_comb_units(MlpOp& mlp, const CombInput& z, int p,
                    const std::function<Terms(int residue)>& value_of, const CombGate* gate) {
  Terms inputs = z.z;
  inputs.emplace_back(z.one, kCombOffset);
  float gate_bias = -kCombOffset;
  if (gate) {
    for (auto [dim, w] : gate->indicators) inputs.emplace_back(dim, gate->strength * w);
    gate_bias -= gate->strength * static_cast<float>(gate->count);
  }
  // gate_bias and -b are exact quarters below 2^22: their sum is exact in float32.
  for_each_comb_unit(z.max_value, p, values_of(p, value_of), [&](double b, const Terms& outputs) {
    mlp.add_unit(inputs, static_cast<float>(-b) + gate_bias, outputs);
  });
}

double comb_output_magnitude(long max_value, int p,
                             const std::function<Terms(int residue)>& value_of) {
  std::map<int, double> sums;
  const double top = static_cast<double>(max_value) + 0.375;
  for_each_comb_unit(max_value, p, values_of(p, value_of), [&](double b, const Terms& outputs) {
    if (b < top)
      for (auto [dim, w] : outputs) sums[dim] += std::abs(static_cast<double>(w)) * (top - b);
  });
  double largest = 0;
  for (auto [dim, sum] : sums) largest = std::max(largest, sum);
  return largest;
}

double comb_output_magnitude_bound(long max_value, int p) {
  const double top = static_cast<double>(max_value) + 0.375;
  double sum = 0;
  for (long k = -1; k <= max_value + 1; ++k)
    for (double b : {static_cast<double>(k) - 0.25, static_cast<double>(k) + 0.25})
      if (b < top) sum += top - b;
  return 2.0 * (p - 1) * sum;
}

void add_residue_units(MlpOp& mlp, const CombInput& z, int p, const Subspace& out) {
  add_comb_units(mlp, z, p, [&](int r) { return Terms{{out[r], 1.0f}}; });
}

}  // namespace krc
