#include "primitives/residue.hpp"

#include <map>

namespace krc {

void add_residue_units(MlpOp& mlp, const Terms& z, int p, long max_value, const Subspace& out) {
  // trapezoid_m = 2 [R(m-3/4) - R(m-1/4) - R(m+1/4) + R(m+3/4)],  R(b) = ReLU(z - b).
  // Breakpoint b = k + 1/4 closes trapezoid k (-2) and opens trapezoid k+1 (+2);
  // b = k - 1/4 closes the rise of trapezoid k (-2) and ends trapezoid k-1 (+2).
  auto residue = [p](long m) { return static_cast<int>(((m % p) + p) % p); };
  auto add = [&](double b, long minus, long plus) {
    std::map<int, float> weights;
    if (minus >= 0 && minus <= max_value) weights[residue(minus)] -= 2.0f;
    if (plus >= 0 && plus <= max_value) weights[residue(plus)] += 2.0f;
    Terms outputs;
    for (auto [r, w] : weights)
      if (w != 0.0f) outputs.emplace_back(out[r], w);
    if (!outputs.empty()) mlp.add_unit(z, static_cast<float>(-b), outputs);
  };
  for (long k = -1; k <= max_value + 1; ++k) {
    if (k >= 0) add(static_cast<double>(k) - 0.25, k, k - 1);          // R(k - 1/4)
    if (k <= max_value) add(static_cast<double>(k) + 0.25, k, k + 1);  // R(k + 1/4)
  }
}

}  // namespace krc
