#include "forward/identical_sum.hpp"

#include <algorithm>
#include <cmath>

namespace krc {

namespace {

// The zone of |s| whose floats have one spacing: a binade, or the subnormals [0, 2^-126).
struct Zone {
  double lo, hi;
};
Zone zone_of(double a) {
  if (a < 0x1p-126) return {0.0, 0x1p-126};
  int exponent;
  std::frexp(a, &exponent);  // a = m 2^exponent, m in [1/2, 1)
  const double lo = std::ldexp(1.0, exponent - 1);
  return {lo, 2.0 * lo};
}
bool inside(double a, const Zone& z) { return a >= z.lo && a < z.hi; }

}  // namespace

float sequential_sum_of_identical(float s, float term, long long count) {
  constexpr long long kDirect = 8;  // short sums are just added
  while (count > 0) {
    if (count <= kDirect || !std::isfinite(s) || !std::isfinite(term)) {
      for (; count > 0; --count) s += term;
      return s;
    }
    // Three real steps: a1 -> a2 inside one zone leaves a2 even after a tie, so a2 -> a3
    // shows the increment every later step inside that zone takes.
    const float a1 = s + term;
    if (a1 == s) return s;  // the term no longer changes s, and never will
    const float a2 = a1 + term, a3 = a2 + term;
    count -= 3;
    s = a3;
    if (a3 == 0.0f) continue;
    // Mirror negative sums: rounding to nearest is symmetric under negation.
    const double sign = a3 < 0.0f ? -1.0 : 1.0;
    const double m1 = sign * a1, m2 = sign * a2, m3 = sign * a3, t = sign * term;
    const Zone z = zone_of(m3);
    if (!inside(m1, z) || !inside(m2, z)) continue;
    const double d = m3 - m2;  // exact: both in the zone
    if (d == 0.0) return s;
    // Steps i = 0, 1, ... from m3 stay inside while m3 + i d + t does.
    long long steps;
    if (t > 0.0) {
      const double room = z.hi - t - m3;  // i d < room
      steps = room <= 0.0 ? 0 : static_cast<long long>(std::ceil(room / d));
    } else {
      const double room = m3 + t - z.lo;  // i |d| <= room
      steps = room < 0.0 ? 0 : static_cast<long long>(std::floor(room / -d)) + 1;
    }
    steps = std::min(std::max(steps - 2, 0LL), count);
    s = static_cast<float>(sign * (m3 + static_cast<double>(steps) * d));  // exact
    count -= steps;
  }
  return s;
}

}  // namespace krc
