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

// The plain comb: one-hot(z mod p) into `out` (width p).
void add_residue_units(MlpOp& mlp, const CombInput& z, int p, const Subspace& out);

}  // namespace krc
