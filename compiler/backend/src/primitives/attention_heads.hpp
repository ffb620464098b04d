#pragma once
// The three kinds of attention head the constructions use. Each returns a HeadOp for the
// caller to add to the program, named and tagged with the role the caller gives.
#include <string>

#include "primitives/categorical.hpp"
#include "primitives/features.hpp"

namespace krc {

// Value/output entries for a (source, destination, weight) copy list: one value index per
// destination dimension (shared by every head builder, exact_attention.cpp included).
void add_copy(HeadOp& head, const std::vector<Entry>& copy);

// Sharpness of selection heads. The right position wins by a score gap of at least
// 2*lambda (position codes) or lambda (latest marked), so the weight left on others is below
// e^-20 ~ 2e-9: copied one-hots come out exact in float32. The two position fetches below take
// lambda from f.select_sharpness() instead: 20 by default, kLayerNormSharpness under `--norm
// layernorm`, where every key but the target loses by at least 2 * 64 = 128 > 110, so float32's
// exp(-gap) is exactly 0 and the fetch leaks nothing (compiler/README.md §7).
inline constexpr float kSelectSharpness = 20.0f;
inline constexpr float kLayerNormSharpness = 64.0f;

// Copies values from position max(t - k, 0): score = lambda * code(max(t-k,0)) . code(j), a
// unique maximum at the target with gap 2*lambda. `copy` lists (source dim, destination dim,
// weight); several source dims may feed one destination (a linear map).
HeadOp fetch_from_offset(Features& f, int k, const std::vector<Entry>& copy, std::string name,
                         Role role);

// The same fetch from max(t - k, 0) with one code for every k: the key is the position phase
// (features.hpp) of j, the query the phase of t rotated back by k, so the score is
// lambda * sum_b cos(pi (j - (t - k)) / 2^b). At j = t - k every term is 1; any other j in
// [t - k - 2^bits + 1, t] has a frequency b (j - t + k = 2^b * odd) whose term is -1: a gap of
// at least 2 * lambda, as with position codes (and only j - t + k = +-2^(bits-1) comes that
// close; every other j is 3 lambda below). Where t < k there is no such j; the query adds
// lambda' (k + 1/2 - t) on BOS's key, lambda' = 2 lambda bits, which puts BOS at least
// lambda (bits + 2) above everything for t < k, 2 lambda + lambda'/2 above at t = k (BOS is the
// target), and lambda'/2 below the target from t = k + 1 on. Costs 2 bits - 1 dimensions in all,
// instead of `bits` per offset.
HeadOp fetch_back_by_phase(Features& f, int k, const std::vector<Entry>& copy, std::string name,
                           Role role);

// Copies values from the latest position j <= t whose `flag` dimension is 1 (BOS must be
// flagged): score = lambda * ((max_len + 1) * flag_j + j). This is the memory unit
// (flip-flop) of the Krohn-Rhodes construction. Under `--norm layernorm` (f.select_sharpness()
// not kSelectSharpness) it is exact_latest_flagged's head instead: score 128 (2^P flag_j + j),
// every other key at least 128 below, so float32's softmax gives it exactly 0.
HeadOp latest_flagged(Features& f, int flag_dim, const std::vector<Entry>& copy, std::string name,
                      Role role);

// Writes sum_{1<=j<=t} value_j into `destination`: the head puts score ln(max_len+1-t) on BOS
// and 0 elsewhere, so softmax gives every position 1 <= j <= t weight exactly 1/(max_len+1),
// a constant denominator; the output weight max_len+1 turns it back into a sum. The values
// must be 0 at BOS.
HeadOp prefix_sum(Features& f, const Terms& value, int destination, std::string name, Role role);

// The same sum over t's block of B positions so far (previous: over the whole block before
// t's), for counters whose long sums would round in float32. Keys carry their block's +-1
// code, the query t's (or the previous block's): lambda * (code . code) is lambda * H within
// the block and at least 2 lambda less outside it. BOS carries no code but scores lambda * H
// + ln(B + 1 - k) (k: t's place in its block; previous: + 0), so every position of the block
// gets weight exactly 1/(B + 1) and the output weight B + 1 makes the sum.
HeadOp window_sum(Features& f, int block, bool previous, const Terms& value, int destination,
                  std::string name, Role role);

// The sum of `value` over the block starts j <= t (`value` must be 0 elsewhere): the head
// scores mu on block starts, mu + ln(S + 1 - starts so far) on BOS and 0 elsewhere, with mu =
// 120 so that the other positions' weights are exact zeros in float32 and the softmax
// normaliser sums the starts only (at most S + 1 terms, S = ceil(T / B)).
HeadOp block_sum(Features& f, int block, const Terms& value, int destination, std::string name,
                 Role role);

}  // namespace krc
