#pragma once
// The forward pass of network.hpp as a plain float32 framework runs it: every product and every
// sum in float32, each sum taken term by term in index order (heads in order, keys from BOS
// on, hidden units in order). An oracle for constructions that claim exactness in float32,
// where the runtime (which sums in float64 and rounds once) and numpy (blocked sums) are not.
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc::test {

// The residual stream after the last layer, [len+1, d_model].
RowMatrix float32_residual(const Network& net, const std::vector<LetterId>& word,
                           AttentionKind attention = AttentionKind::Softmax);

// The argmax state at every position; -1 where the maximum is not unique.
std::vector<int> float32_states(const Network& net, const std::vector<LetterId>& word,
                                AttentionKind attention = AttentionKind::Softmax);
// The same from a residual stream float32_residual returned (one pass where both are needed).
std::vector<int> float32_states(const Network& net, const RowMatrix& x);

}  // namespace krc::test
