#pragma once
// A proof, for gpt2_exactness.cpp, that a select head leaks nothing: when every key but the
// winner scores at least kUnderflowGap below it, float32's exp(score - max) is exactly 0 for
// them (e^x < 2^-150, half the least subnormal, below x = -150 ln 2 = -103.97; the margin to
// 110 covers exp implementations a few ulps off, and those that flush below ln(FLT_MIN) =
// -87.3 give 0 all the more), the softmax's sum is exactly 1 and the winner's weight exactly 1.
#include <optional>
#include <vector>

#include "export/gpt2_value_sets.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

inline constexpr double kUnderflowGap = 110.0;

// The least margin, over every query position t and key positions j <= t, by which the best
// key's float32 score beats every other key's, when the head's query and key read only
// coordinates that are functions of the position (`written`: coordinates an earlier sublayer
// writes); nullopt otherwise, or past max-len 4096 (the pairs are enumerated).
std::optional<double> positional_score_gap(const Network& n, const AttentionHead& h,
                                           const std::vector<bool>& written);

// The same margin for a head whose query is a function of the position and whose key reads such
// coordinates and coordinates in finite value sets (kr's memory heads: a reset flag, score
// 128 (2^P flag_j + j)): the key at position j takes every joint value of those sets (`first`
// at position 0, `later` from 1, taken independent of the word: a superset), and the margin is
// the least distance between two scores of different key positions, after the float32 rounding
// bound, so that whatever the word, the best key beats every other by it. nullopt when the key
// reads a coordinate with neither, past 4,096 joint values, or past max-len 4096.
std::optional<double> flagged_score_gap(const Network& n, const AttentionHead& h,
                                        const std::vector<bool>& written, const ValueSets& first,
                                        const ValueSets& later);

}  // namespace krc
