#pragma once
// Count -> residue: the MLP half of a Z_p counter. The running sum z (an integer, up to noise
// of +-1/4) becomes a function of z mod p through a "comb" of trapezoids, one per integer m in
// [0, max_value]: 1 on [m - 1/4, m + 1/4], 0 outside (m - 3/4, m + 3/4),
//     trapezoid_m(z) = 2 [R(m - 3/4) - R(m - 1/4) - R(m + 1/4) + R(m + 3/4)],  R(b) = ReLU(z - b).
// Neighbouring trapezoids share their breakpoints, so a comb needs 2 (max_value + 2) hidden
// units, each with one input weight (plus the gate's) and the output weights of the residues
// on either side. Its size grows with the largest count; its depth does not.
//
// A gated comb is silent unless every one of `gate.count` one-hot indicators is 1: each unit's
// pre-activation gets strength * (sum of indicators - count), and strength > max_value + 1
// puts it below zero as soon as one indicator is 0. This fuses "look up (gate values, z mod p)"
// into the comb itself, so a counter's comb can write the next counter's increment, or the
// level's coordinate, in the same MLP.
//
// Exactness in float32: every unit also reads the constant feature with weight M = 1.5 * 2^21
// and has M subtracted from its bias. Whatever order a framework sums a unit's inputs in,
// once M is in the sum it lies on the float32 grid of quarters around M, so the count is
// rounded to the nearest quarter there, and z - b (b a quarter) comes out exact. The hidden
// values are exact quarters, their output weights are +-2, and with the units in breakpoint
// order the running output sums are quarters below 4 z: an exact comb, for any count within
// 3/8 of an integer. (Without M each unit would carry the count's own rounding error, and the
// output sum of up to 4 z / p ramps of size up to z would round by eps z^2.)
//
// In any other order the output is exact only while its terms are small: they are multiples
// of 1/2 (quarters times 2 w, w an integer weight of value_of), so every partial sum, in any
// order and grouping, is exact while the sum of the terms' magnitudes is at most 2^23
// (comb_output_magnitude). That sum grows as z^2 (about 4 z^2 / p for a residue one-hot), so
// it holds up to counts of about 1,500 to 2,000 only. A BLAS does not always sum in unit order:
// MKL's sgemm for fewer than 16 rows (one position alone, or the last chunk of a long word)
// splits the hidden units over strided SIMD lanes, and a comb of a count of 16,384 then comes
// out wrong by up to hundreds (issue 36). Counts past that reach are summed in blocks
// (kr_plan.cpp), whose combs stay far below 2^23.
#include <functional>
#include <string>

#include "primitives/categorical.hpp"

namespace krc {

struct CombInput {
  Terms z;         // the count, as a sum of residual terms
  long max_value;  // the largest count: trapezoids for 0..max_value
  int one;         // the residual dimension holding the constant 1 (for the offset M)
};

// 1.5 * 2^21: float32 numbers near it are the multiples of 1/4.
inline constexpr float kCombOffset = 3145728.0f;

struct CombGate {
  Terms indicators;  // the sum of `count` one-hot indicators (each exactly 0 or 1)
  int count = 0;
  float strength = 0;  // > max_value + 1
};

// Adds the comb for z = m: the MLP writes value_of(m mod p).
void add_comb_units(MlpOp& mlp, const CombInput& z, int p,
                    const std::function<Terms(int residue)>& value_of,
                    const CombGate* gate = nullptr);

// The largest sum of |terms| one output of that comb takes for a count up to
// z.max_value + 3/8: over the output dims d, sum_u |w(d, u)| ReLU(max_value + 3/8 - b_u). At most
// kAnyOrderExactSum (and value_of's weights integers): exact in every summation order.
double comb_output_magnitude(long max_value, int p,
                             const std::function<Terms(int residue)>& value_of);
// An upper bound of comb_output_magnitude over every value_of whose weights lie in [0, p - 1]
// (each unit's output weight is then at most 2 (p - 1) in magnitude; the bound takes it).
double comb_output_magnitude_bound(long max_value, int p);
// 2^23: a float32 sum of multiples of 1/2 whose magnitudes add up to at most this is exact in
// any order (every partial sum is a multiple of 1/2 below 2^23, a float32 number).
inline constexpr double kAnyOrderExactSum = 8388608.0;

// The plain comb: one-hot(z mod p) into `out` (width p).
void add_residue_units(MlpOp& mlp, const CombInput& z, int p, const Subspace& out);

}  // namespace krc
