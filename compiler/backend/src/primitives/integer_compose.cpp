#include "primitives/integer_compose.hpp"

#include <algorithm>

namespace krc {

int integer_compose_slope(int n) { return 4 * ((n + 1) / 2); }

void add_integer_compose_units(MlpOp& mlp, const Subspace& earlier, const Subspace& current,
                               const std::vector<int>& targets) {
  const int n = current.width;
  const auto k = static_cast<float>(integer_compose_slope(n));
  for (int q : targets) {
    const int x = earlier[q], y = current[q];
    for (int s = 1; s <= n; ++s) {
      const float shift = k * static_cast<float>(s);
      mlp.add_unit({{current[s - 1], 1.0f}, {x, -k}}, shift + k / 4, {{y, 1.0f}});
      mlp.add_unit({{current[s - 1], 1.0f}, {x, -k}}, shift - 3 * k / 4, {{y, -1.0f}});
    }
    mlp.add_unit({{y, 1.0f}, {x, -k}}, k * (static_cast<float>(n) + 0.25f), {{y, -1.0f}});
  }
}

void add_integer_one_hot_units(MlpOp& mlp, int earlier, const Subspace& current,
                               const Subspace& out) {
  const int n = current.width;
  const auto l = static_cast<float>(n);
  for (int s = 1; s <= n; ++s)
    for (int v = 1; v <= n; ++v) {
      const float shift = l * static_cast<float>(s) - static_cast<float>(v);
      for (int c : {1, 0, -1})
        mlp.add_unit({{current[s - 1], 1.0f}, {earlier, -l}}, shift + static_cast<float>(c),
                     {{out[v - 1], c == 0 ? -2.0f : 1.0f}});
    }
}

double integer_compose_magnitude(int n) {
  const double k = integer_compose_slope(n);
  double sum = n + (n + k * (n - 0.75)) + (n + k / 4);  // the old y_q, u3, u1 at s = 1
  for (int s = 2; s <= n; ++s) sum += (n + k * (s - 1) + k / 4) + (n + k * (s - 1) - 3 * k / 4);
  return sum;
}

double integer_one_hot_magnitude(int n) {
  const double l = n;
  double sum = 0;
  for (int s = 1; s <= n; ++s) sum += 4 * (n - 1 + l * (s - 1));  // h_1 + 2 h_0 + h_-1 at v = 1
  return sum;
}

bool integer_coordinates_exact(int n) {
  return std::max(integer_compose_magnitude(n), integer_one_hot_magnitude(n)) <=
         kFloat32ExactIntegers;
}

}  // namespace krc
