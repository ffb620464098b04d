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

// A run of one output's terms in unit order is a (leading -u2) + whole pairs + (trailing u1)
// + (-u3 at the end): the pairs are >= 0 and sum to at most y + K/4 + K(n - 1), so the run lies
// between -(u2 + u3) and (pairs + u1), each at its largest (x = 1, y = n).
double integer_compose_run_bound(int n) {
  const double k = integer_compose_slope(n);
  const double u1 = n + k * (n - 1) + k / 4, u2 = n + k * (n - 1) - 3 * k / 4;
  const double u3 = n + k * (n - 0.75), pairs = n + k / 4 + k * (n - 1);
  return std::max(pairs + u1, u2 + u3);
}

// A run of out[v]'s terms is whole triples (tents: 0 or 1, one of them at most), and at its
// ends the part h_-1 - ... of a triple (at most h + 1 in magnitude: -2 h_0 + h_-1 =
// -h_0 - (h_0 - h_-1)) and h_1 - 2 h_0 (at most h), with h <= n + L(n - 1) = n^2.
double integer_one_hot_run_bound(int n) {
  const double h = double(n) * n;
  return 1 + (h + 1) + h;
}

bool integer_coordinates_exact_any_order(int n) {
  return std::max(integer_compose_magnitude(n), integer_one_hot_magnitude(n)) <=
         kFloat32ExactIntegers;
}

// A pre-activation sums y_s, -K x and the bias (u3: y_q, -K x, K(n + 1/4)); a tent's,
// y_s, -L x and L s - v + c. Integers whose magnitudes add up to these, so exact in any order.
double integer_preactivation_bound(int n) {
  const double k = integer_compose_slope(n), h = double(n) * n;
  return std::max(n + 2 * k * n + k / 4, n + 2 * h + 1);
}

// The decode's logits (2 v c - v(v + 2), below 3 n^2) stay below these too.
bool integer_coordinates_exact(int n) {
  return std::max({integer_compose_run_bound(n), integer_one_hot_run_bound(n),
                   integer_preactivation_bound(n)}) <= kFloat32ExactIntegers;
}

}  // namespace krc
