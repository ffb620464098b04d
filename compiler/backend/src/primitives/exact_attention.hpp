#pragma once
// Attention heads whose softmax is exact in float32, whatever the length: every score is an
// integer multiple of 64 below 2^24 (so q . k is computed without rounding), and the scores
// that must not count lie at least 128 below the maximum, where exp underflows to exactly 0
// (e^-104 is below half the smallest float32). The weights are then exactly 1/2^k on 2^k
// tied keys (or 1 on one key), and the weighted sums of integer values are exact.
//
//   dyadic sums       sum_{1<=j<=t} value_j as one head per bit k of t: head k averages the
//                     aligned block of 2^k positions that bit k of t covers (the Fenwick
//                     decomposition of 1..t), so its weights are exactly 2^-k, its partial
//                     sums exact multiples of 2^-k, and the output weight 2^k gives the block
//                     sum exactly. (A constant-denominator head over all t positions weighs
//                     them 1/(T+1), which float32 rounds, and sums of ~T such terms drift.)
//   latest flagged    copies the values of the latest position whose flag is 1, with weight
//                     exactly 1 on it: score 128 (2^P flag_j + j), 2^P > max_len.
//
// Legend: t the query position, j a key position (BOS is 0), i = j - 1 the key's place among
// the letters, B = bits of a position code, k a bit (0 = least significant), T = max_len.
#include <string>
#include <vector>

#include "primitives/categorical.hpp"
#include "primitives/features.hpp"

namespace krc {

// Score of one matching bit (a mismatch costs twice this): exp(-128) is 0 in float32.
inline constexpr float kExactBitScore = 64.0f;
inline constexpr float kExactGap = 2.0f * kExactBitScore;

// B heads (B = f.code_bits()) whose outputs add up to sum_{1<=j<=t} value_j exactly: head k
// writes its block's sum into destinations[k] (separate dimensions, so that the scheduler can
// put every head in one layer); its role is `role` with step k + 1. `value` must be 0 at BOS
// and integral.
std::vector<HeadOp> dyadic_sum_heads(Features& f, const Terms& value,
                                     const std::vector<int>& destinations, const std::string& name,
                                     Role role);

// The same sum, allocated and added: one scalar per bit ("<sums> over the block of bit k", role
// `role` with step k + 1), the heads named `heads` added to the program under `group`; returns
// the sum of those scalars (each weight 1), the exact sum_{1<=j<=t} value_j.
Terms add_dyadic_sum(Features& f, const Terms& value, const std::string& sums,
                     const std::string& heads, Role role, const std::string& group);

// Copies `copy` (source dim, destination dim, weight) from the latest position j <= t where
// the linear form `flag` is 1 (it must be exactly 0 or 1 everywhere, and 1 at BOS).
HeadOp exact_latest_flagged(Features& f, const Terms& flag, const std::vector<Entry>& copy,
                            std::string name, Role role);

}  // namespace krc
