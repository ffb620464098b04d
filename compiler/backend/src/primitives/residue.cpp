#include "primitives/residue.hpp"

#include <map>

namespace krc {

void add_comb_units(MlpOp& mlp, const CombInput& z, int p,
                    const std::function<Terms(int residue)>& value_of, const CombGate* gate) {
  const long max_value = z.max_value;
  // Breakpoint b = k + 1/4 closes trapezoid k (-2) and opens trapezoid k+1 (+2);
  // b = k - 1/4 closes the rise of trapezoid k (-2) and ends trapezoid k-1 (+2).
  std::vector<Terms> values(p);
  for (int r = 0; r < p; ++r) values[r] = value_of(r);
  auto residue = [p](long m) { return static_cast<int>(((m % p) + p) % p); };
  Terms inputs = z.z;
  inputs.emplace_back(z.one, kCombOffset);
  float gate_bias = -kCombOffset;
  if (gate) {
    for (auto [dim, w] : gate->indicators) inputs.emplace_back(dim, gate->strength * w);
    gate_bias -= gate->strength * static_cast<float>(gate->count);
  }
  auto add = [&](double b, long minus, long plus) {
    std::map<int, float> weights;
    if (minus >= 0 && minus <= max_value)
      for (auto [dim, w] : values[residue(minus)]) weights[dim] -= 2.0f * w;
    if (plus >= 0 && plus <= max_value)
      for (auto [dim, w] : values[residue(plus)]) weights[dim] += 2.0f * w;
    Terms outputs;
    for (auto [dim, w] : weights)
      if (w != 0.0f) outputs.emplace_back(dim, w);
    // gate_bias and -b are exact quarters below 2^22: their sum is exact in float32.
    if (!outputs.empty()) mlp.add_unit(inputs, static_cast<float>(-b) + gate_bias, outputs);
  };
  for (long k = -1; k <= max_value + 1; ++k) {
    if (k >= 0) add(static_cast<double>(k) - 0.25, k, k - 1);          // R(k - 1/4)
    if (k <= max_value) add(static_cast<double>(k) + 0.25, k, k + 1);  // R(k + 1/4)
  }
}

void add_residue_units(MlpOp& mlp, const CombInput& z, int p, const Subspace& out) {
  add_comb_units(mlp, z, p, [&](int r) { return Terms{{out[r], 1.0f}}; });
}

}  // namespace krc
