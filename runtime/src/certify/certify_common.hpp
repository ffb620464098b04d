#pragma once
// What the two MLP rules of the scan certifier share (pairs_rule.cpp; selector_layer.cpp and
// selector_rule.cpp, the per-slot rule): the refusal they throw, the drift they allow, the
// float32 residual add and the MLP's sum-plus-bias as the arithmetic computes them, and the
// text of numbers.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "certify/interval.hpp"
#include "krc/runtime/certify.hpp"
#include "krc/runtime/network.hpp"

namespace krc::certify_detail {

// Past this much of a change to an encoding or a bit, the layer has not reproduced it: far
// above the softmax's leaks (about T e^-40 per layer) and far below one ulp of any value held.
constexpr double kDrift = 0x1p-30;

struct Refused {
  CertifyRefusal refusal;
};

[[noreturn]] inline void refuse(int layer, std::string part, std::string reason,
                                bool undecided = false) {
  throw Refused{CertifyRefusal{layer, std::move(part), std::move(reason), undecided}};
}

// Per residual dimension: some head's output or some MLP's output (weight or bias) reaches it
// (written_dimensions.cpp). The others hold the embedding's value at every layer.
std::vector<char> written_dimensions(const Network& net);

inline std::string number(double x) {
  std::ostringstream s;
  s.precision(9);
  s << x;
  return s.str();
}

// The hull of a value set (not empty).
inline bounds::Interval hull_of(const std::vector<bounds::Interval>& set) {
  bounds::Interval h = set.front();
  for (const bounds::Interval& v : set) h = bounds::hull(h, v);
  return h;
}

inline std::string interval_text(bounds::Interval v) {
  return v.is_point() ? number(v.lo) : "[" + number(v.lo) + ", " + number(v.hi) + "]";
}

// fl32(a + b) for the residual adds, monotone in both, then stored in the format.
inline bounds::Interval add_rounded(bounds::Interval a, bounds::Interval b, bounds::Format f) {
  const double lo = a.lo + b.lo, hi = a.hi + b.hi;
  const bounds::Interval v = bounds::float32_inside(
      std::nextafter(static_cast<double>(static_cast<float>(std::nextafter(lo, -1e300))), -1e300),
      std::nextafter(static_cast<double>(static_cast<float>(std::nextafter(hi, 1e300))), 1e300));
  return bounds::store(f, v);
}

// An MLP row's sum of products plus its bias: in float32 the bias may be any term of the
// sum; in bf16/fp16 R(R(x W) + b), as `x @ W + b` runs cast (runtime/README.md).
inline bounds::Interval mlp_sum(bounds::Accumulator acc, double bias, bounds::Format f) {
  if (f == bounds::Format::Float32) {
    acc.add_constant(bias);
    return acc.result();
  }
  return bounds::store(
      f, add_rounded(bounds::store(f, acc.result()), bounds::Interval::point(bias), f));
}

}  // namespace krc::certify_detail
