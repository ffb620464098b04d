#pragma once
// The three kinds of attention head the constructions use. Each returns a HeadOp for the
// caller to add to the program, named and tagged with the role the caller gives.
#include <string>

#include "primitives/categorical.hpp"
#include "primitives/features.hpp"

namespace krc {

// Sharpness of selection heads. The right position wins by a score gap of at least
// 2*lambda (position codes) or lambda (latest marked), so the weight left on others is below
// e^-20 ~ 2e-9: copied one-hots come out exact in float32.
inline constexpr float kSelectSharpness = 20.0f;

// Copies values from position max(t - k, 0): score = lambda * code(max(t-k,0)) . code(j), a
// unique maximum at the target with gap 2*lambda. `copy` lists (source dim, destination dim,
// weight); several source dims may feed one destination (a linear map).
HeadOp fetch_from_offset(Features& f, int k, const std::vector<Entry>& copy, std::string name,
                         Role role);

// Copies values from the latest position j <= t whose `flag` dimension is 1 (BOS must be
// flagged): score = lambda * ((max_len + 1) * flag_j + j). This is the memory unit
// (flip-flop) of the Krohn-Rhodes construction.
HeadOp latest_flagged(Features& f, int flag_dim, const std::vector<Entry>& copy, std::string name,
                      Role role);

// Writes sum_{1<=j<=t} value_j into `destination`: the head puts score ln(max_len+1-t) on BOS
// and 0 elsewhere, so softmax gives every position 1 <= j <= t weight exactly 1/(max_len+1),
// a constant denominator; the output weight max_len+1 turns it back into a sum. The values
// must be 0 at BOS.
HeadOp prefix_sum(Features& f, const Terms& value, int destination, std::string name, Role role);

}  // namespace krc
