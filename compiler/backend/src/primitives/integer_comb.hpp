#pragma once
// An MLP that computes any function f of an integer input z exactly: on the integers of
// [lo, hi], f is the piecewise-linear interpolation
//     f(z) = f(lo) + sum_{lo <= b < hi} s_b ReLU(z - b),   s_b = f(b+1) - 2 f(b) + f(b-1),
// with f(lo-1) = f(lo): one unit per integer where f bends, plus one for f(lo). A residue
// one-hot bends at every integer (3 outputs per unit); a staircase at each step (2 outputs).
// Unlike the residue comb (primitives/residue.hpp), which reads a noisy count through
// trapezoids, z must be an exact integer: the units are then exact integers z - b, and every
// run of consecutive units sums to an integer below (|f| + 2 |f'|) (hi - lo) in magnitude, so
// float32 sums taken in unit order (or in blocks of consecutive units) are exact.
//
// Gated: with `gate` (a linear form that is exactly 0 or 1) every unit also reads
// G (gate - 1), G = hi - lo + 1, which puts it below zero when the gate is 0: f(z) * gate.
//
// Legend: z the input, [lo, hi] its range, b a breakpoint, f(m) a sparse vector (Terms).
#include <functional>

#include "primitives/categorical.hpp"

namespace krc {

struct IntegerInput {
  Terms z;  // the integer, as a linear form of the residual stream
  long long lo = 0, hi = 0;
  int one = -1;  // the residual dimension holding 1 (for f(lo) when ungated)
};

// Adds the units that write f(z) (times the gate, if any) to the residual stream.
void add_integer_function(MlpOp& mlp, const IntegerInput& z,
                          const std::function<Terms(long long m)>& f, const Terms* gate = nullptr);

// The number of units add_integer_function adds (for plans that predict widths).
long long integer_function_units(const IntegerInput& z, const std::function<Terms(long long m)>& f);

}  // namespace krc
