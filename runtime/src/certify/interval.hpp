#pragma once
// Sound bounds on what a float32, bf16 or fp16 framework computes, for the certifier.
//
// A value is an Interval [lo, hi] of reals that the computed value is known to lie in. The
// endpoints are float32 numbers (every stored value of the three arithmetics is one), so a
// product of two endpoints is exact in double and a bound computed from them is exact or
// widened outwards. Two facts make the bounds tight enough to prove exactness:
//  - rounding to nearest is monotone, so a stored value R(v) with v in [lo, hi] lies in
//    [R(lo), R(hi)]: an interval narrower than half an ulp around a representable number
//    snaps to that number (a fetched 1 + 4e-18 is stored as exactly 1);
//  - a computed float32 is a float32, so a real bound [lo, hi] on it tightens to the float32
//    numbers inside it.
// Sums are bounded for *any* summation order (sequential, blocked, strided SIMD lanes, fused
// multiply-adds): Higham's |fl(sum) - sum| <= gamma_n sum |x_i|, or exactly 0 when every term
// is a multiple of 2^g and their magnitudes add up to at most 2^24 * 2^g (every partial sum
// is then a float32: the criterion gpt2_value_sets.hpp uses). A third case keeps exactness
// through the softmax's leaks: exact terms G on such a grid plus inexact ones of total
// magnitude s < 2^(g-24). By induction over any summation tree, a node whose exact terms sum
// to a nonzero G_node computes exactly G_node (its small part is below half an ulp of any
// nonzero multiple of 2^g, and G_node is a float32), and a node whose exact terms sum to 0
// holds only its small terms' sum. So the result is G when G != 0, else the small terms' sum.
#include <cstdint>
#include <string>

#include "krc/runtime/forward.hpp"

namespace krc::bounds {

struct Interval {
  double lo = 0.0, hi = 0.0;
  static Interval point(double v) { return {v, v}; }
  bool is_point() const { return lo == hi; }
  double magnitude() const;  // max |x| over the interval
};

Interval hull(Interval a, Interval b);
Interval relu(Interval a);

// The storage format of an arithmetic: what every stored tensor is rounded to.
enum class Format { Float32, BFloat16, Float16 };
Format format_of(Arithmetic arithmetic);  // throws std::invalid_argument for float64 ones

// Round to nearest, ties to even, to the format (an infinity past its largest finite value).
double round_to(Format format, double x);
// The float32 numbers inside the real interval [lo, hi] (a computed float32 lies there);
// an empty result (lo > hi after tightening) cannot happen for a sound bound, and is kept
// as the nearest floats so that it shows in a report instead of vanishing.
Interval float32_inside(double lo, double hi);
// What a stored value is, given the float32 it was computed as: R applied to both ends.
Interval store(Format format, Interval float32_value);

// A sum of products w_i * x_i (and a bias), computed in float32 in any order, each product
// rounded to float32 first or fused. add() takes the real range of one term's factors.
class Accumulator {
 public:
  void add(Interval a, Interval b);
  void add(double w, Interval x) { add(Interval::point(w), x); }
  void add_constant(double c) { add(Interval::point(1.0), Interval::point(c)); }
  // The float32 numbers the computed sum can be.
  Interval result() const;
  // True when the sum is computed exactly in every order (points, on one grid, small).
  bool exact() const;
  // True when the point terms are on one grid and small enough, and the others below half
  // an ulp of its least nonzero value (the third case above).
  bool grid_dominated() const;
  int terms() const { return terms_; }

 private:
  double lo_ = 0.0, hi_ = 0.0, magnitude_ = 0.0;          // every term
  double small_lo_ = 0.0, small_hi_ = 0.0, small_ = 0.0;  // the terms that are not points
  int terms_ = 0;
  bool points_ = true, float32_products_ = true;  // of the point terms
  double point_sum_ = 0.0, point_sum_hi_ = 0.0, point_magnitude_ = 0.0;
  // The point terms' sum, rounded to nearest in double without the outward nudges: when
  // exact() every partial sum is on the grid and below 2^24 of it, so this is the sum itself
  // (an exact 0 stays 0, where lo_ and hi_ would have moved to the subnormals around it).
  double plain_sum_ = 0.0;
  int lowest_bit_ = 1 << 20;  // exponent of the lowest set bit of any point product
};

// The attention-weighted sum of one value coordinate when one key (the target) carries
// weight p in [p.lo, p.hi] and the others together at most `others` (each p_j v_j bounded by
// p_j * bound): the sum of n terms is within 2*others*(1 + n u) of fl(p v) in any
// order, because every addition that involves the target's term errs by at most the other
// operand, a sum of disjoint runs of the small terms.
Interval dominated_sum(Interval p, Interval v, double others, long long n);

}  // namespace krc::bounds
