// Interval bounds for the certifier: rounding to a format, snapping to float32, and the
// any-order summation bounds (see interval.hpp).
#include "certify/interval.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace krc::bounds {

namespace {

constexpr double kUnit = 0x1p-24;  // float32's unit roundoff

// The next double away from zero in each direction: widens a bound computed in double by
// more than its own rounding error.
double down(double x) { return std::nextafter(x, -std::numeric_limits<double>::infinity()); }
double up(double x) { return std::nextafter(x, std::numeric_limits<double>::infinity()); }

// Round x to `bits` significant bits with least normal exponent emin, subnormals below it,
// and an infinity past max_finite (ties to even: nearbyint in the default rounding mode).
double round_bits(double x, int bits, int emin, double max_finite) {
  if (x == 0.0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);  // x = m 2^e, 0.5 <= |m| < 1: the leading bit is 2^(e-1)
  const int lead = std::max(e - 1, emin);
  const double quantum = std::ldexp(1.0, lead - (bits - 1));
  const double r = std::nearbyint(x / quantum) * quantum;
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}

int lowest_set_bit(double p) {
  int e = 0;
  const double m = std::frexp(std::fabs(p), &e);
  const auto mantissa = static_cast<std::uint64_t>(std::ldexp(m, 53));
  return e - 53 + std::countr_zero(mantissa);
}

}  // namespace

double Interval::magnitude() const { return std::max(std::fabs(lo), std::fabs(hi)); }

Interval hull(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

Interval relu(Interval a) { return {std::max(a.lo, 0.0), std::max(a.hi, 0.0)}; }

Format format_of(Arithmetic arithmetic) {
  switch (arithmetic) {
    case Arithmetic::Float32:
      return Format::Float32;
    case Arithmetic::BFloat16:
      return Format::BFloat16;
    case Arithmetic::Float16:
      return Format::Float16;
    default:
      throw std::invalid_argument(std::string("certify proves float32, bf16 or fp16, not ") +
                                  krc::to_string(arithmetic));
  }
}

double round_to(Format format, double x) {
  switch (format) {
    case Format::Float32:
      return round_bits(x, 24, -126, 0x1.fffffep127);
    case Format::BFloat16:
      return round_bits(round_bits(x, 24, -126, 0x1.fffffep127), 8, -126, 0x1.fep127);
    case Format::Float16:
      return round_bits(round_bits(x, 24, -126, 0x1.fffffep127), 11, -14, 65504.0);
  }
  return x;
}

Interval float32_inside(double lo, double hi) {
  auto f_lo = static_cast<double>(static_cast<float>(lo));
  if (f_lo < lo)
    f_lo = std::nextafter(static_cast<float>(f_lo), std::numeric_limits<float>::infinity());
  auto f_hi = static_cast<double>(static_cast<float>(hi));
  if (f_hi > hi)
    f_hi = std::nextafter(static_cast<float>(f_hi), -std::numeric_limits<float>::infinity());
  if (f_lo > f_hi) return {static_cast<float>(lo), static_cast<float>(hi)};
  return {f_lo, f_hi};
}

Interval store(Format format, Interval v) {
  if (format == Format::Float32) return v;
  return {round_to(format, v.lo), round_to(format, v.hi)};
}

void Accumulator::add(Interval a, Interval b) {
  // Endpoints are float32 numbers, so these products are exact in double.
  const double p1 = a.lo * b.lo, p2 = a.lo * b.hi, p3 = a.hi * b.lo, p4 = a.hi * b.hi;
  const double lo = std::min({p1, p2, p3, p4}), hi = std::max({p1, p2, p3, p4});
  if (lo == 0.0 && hi == 0.0) return;  // an exact zero changes no sum
  ++terms_;
  if (!(a.is_point() && b.is_point())) {
    points_ = false;
    small_lo_ = down(small_lo_ + lo);
    small_hi_ = up(small_hi_ + hi);
    small_ = up(small_ + std::max(std::fabs(lo), std::fabs(hi)));
  } else {
    if (static_cast<double>(static_cast<float>(lo)) != lo) float32_products_ = false;
    lowest_bit_ = std::min(lowest_bit_, lowest_set_bit(lo));
    point_sum_ = down(point_sum_ + lo);
    point_sum_hi_ = up(point_sum_hi_ + lo);
    point_magnitude_ = up(point_magnitude_ + std::fabs(lo));
    plain_sum_ += lo;
  }
  lo_ = down(lo_ + lo);
  hi_ = up(hi_ + hi);
  magnitude_ = up(magnitude_ + std::max(std::fabs(lo), std::fabs(hi)));
}

bool Accumulator::exact() const {
  if (terms_ == 0) return true;
  return points_ && float32_products_ && magnitude_ <= std::ldexp(1.0, 24 + lowest_bit_);
}

bool Accumulator::grid_dominated() const {
  if (points_ || !float32_products_ || point_magnitude_ == 0.0) return false;
  if (point_magnitude_ > std::ldexp(1.0, 24 + lowest_bit_)) return false;
  // Every partial sum of small terms, products rounded, is within (1 + n u) of its magnitude.
  const double n = terms_;
  return small_ * (1.0 + 2.0 * n * kUnit) < std::ldexp(1.0, lowest_bit_ - 24);
}

Interval Accumulator::result() const {
  if (terms_ == 0) return Interval::point(0.0);
  // Every partial sum is a multiple of 2^lowest below 2^24 of them: exact in float32 in any
  // order, and in plain_sum_'s double additions too.
  if (exact()) return Interval::point(plain_sum_);
  const double n = terms_;
  const double gamma = n * kUnit / (1.0 - n * kUnit);
  if (grid_dominated()) {
    // G exactly when the point terms' sum G is not 0 (point_sum_ brackets it, exact on the
    // grid); else the small terms' own float32 sum.
    if (!(point_sum_ <= 0.0 && point_sum_hi_ >= 0.0))
      return float32_inside(point_sum_, point_sum_hi_);
    const double slack = up(small_ * (gamma + n * 0x1p-52));
    return float32_inside(down(small_lo_ - slack), up(small_hi_ + slack));
  }
  const double slack = up(magnitude_ * (gamma + n * 0x1p-52));
  return float32_inside(down(lo_ - slack), up(hi_ + slack));
}

Interval dominated_sum(Interval p, Interval v, double others, long long n) {
  // The target's product fl(p v): exact when it is a float32 (p = 1 after the snap), else
  // within u of the real product's range.
  const double p1 = p.lo * v.lo, p2 = p.lo * v.hi, p3 = p.hi * v.lo, p4 = p.hi * v.hi;
  double lo = std::min({p1, p2, p3, p4}), hi = std::max({p1, p2, p3, p4});
  Interval target = float32_inside(lo, hi);
  if (!(lo == hi && target.lo == lo)) {
    lo = down(lo - std::fabs(lo) * kUnit);
    hi = up(hi + std::fabs(hi) * kUnit);
    target = float32_inside(down(static_cast<float>(lo)), up(static_cast<float>(hi)));
    target = {std::min(target.lo, static_cast<double>(static_cast<float>(lo))),
              std::max(target.hi, static_cast<double>(static_cast<float>(hi)))};
  }
  // The small terms' computed partial sums (at most others (1 + n u)) plus one error of at
  // most the other operand at every addition that holds the target's term.
  const double error =
      up(2.0 * others * (1.0 + kUnit) * (1.0 + static_cast<double>(n) * kUnit * 1.01));
  return float32_inside(down(target.lo - error), up(target.hi + error));
}

}  // namespace krc::bounds
