#pragma once
// Count -> residue: the MLP half of a Z_p counter. The running sum z (an integer, up to noise
// of +-0.25) becomes the one-hot of z mod p through a "comb" of trapezoids, one per integer
// m in [0, max_value]: 1 on [m - 1/4, m + 1/4], 0 outside (m - 3/4, m + 3/4). All trapezoids
// share their breakpoints, so the comb needs 2 * (max_value + 2) hidden units, each with one
// input weight and two output weights. Its size grows with the longest input (the count can
// reach (p-1) * max_len); its depth does not.
#include <string>

#include "primitives/categorical.hpp"

namespace krc {

// Adds the comb for z = sum of `z` terms to `mlp`, writing one-hot(z mod p) into `out`
// (width p).
void add_residue_units(MlpOp& mlp, const Terms& z, int p, long max_value, const Subspace& out);

}  // namespace krc
