#include "primitives/integer_comb.hpp"

#include <map>

namespace krc {

namespace {

using Vector = std::map<int, double>;

Vector vector_of(const Terms& terms) {
  Vector v;
  for (auto [dim, w] : terms) v[dim] += w;
  return v;
}

// a - 2b + c, without zeros.
Terms second_difference(const Vector& a, const Vector& b, const Vector& c) {
  Vector sum = a;
  for (auto [dim, w] : b) sum[dim] -= 2.0 * w;
  for (auto [dim, w] : c) sum[dim] += w;
  Terms out;
  for (auto [dim, w] : sum)
    if (w != 0.0) out.emplace_back(dim, static_cast<float>(w));
  return out;
}

// Calls unit(b, s_b) for every bend of f, in increasing b; returns f(lo).
Terms for_each_bend(const IntegerInput& z, const std::function<Terms(long long m)>& f,
                    const std::function<void(long long b, const Terms& s)>& unit) {
  Vector before = vector_of(f(z.lo)), at = before;
  for (long long b = z.lo; b < z.hi; ++b) {
    Vector after = vector_of(f(b + 1));
    Terms s = second_difference(after, at, before);
    if (!s.empty()) unit(b, s);
    before = std::move(at);
    at = std::move(after);
  }
  return f(z.lo);
}

}  // namespace

void add_integer_function(MlpOp& mlp, const IntegerInput& z,
                          const std::function<Terms(long long m)>& f, const Terms* gate) {
  Terms inputs = z.z;
  float gate_bias = 0.0f;
  if (gate) {
    const float strength = static_cast<float>(z.hi - z.lo + 1);
    for (auto [dim, w] : *gate) inputs.emplace_back(dim, strength * w);
    gate_bias = -strength;
  }
  const Terms first = for_each_bend(z, f, [&](long long b, const Terms& s) {
    mlp.add_unit(inputs, gate_bias - static_cast<float>(b), s);
  });
  if (first.empty()) return;
  if (gate)
    mlp.add_unit(*gate, 0.0f, first);
  else
    mlp.add_unit({{z.one, 1.0f}}, 0.0f, first);
}

long long integer_function_units(const IntegerInput& z,
                                 const std::function<Terms(long long m)>& f) {
  long long units = 0;
  const Terms first = for_each_bend(z, f, [&](long long, const Terms&) { ++units; });
  return units + (first.empty() ? 0 : 1);
}

}  // namespace krc
