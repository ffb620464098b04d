#pragma once
// The forward pass of network.hpp written as plainly as possible, in double precision with
// dense matrices: an oracle for the backend's constructions and for the optimised runtime.
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc::test {

// The residual stream after the last layer, [len+1, d_model], for one word.
Eigen::MatrixXd naive_residual(const Network& net, const std::vector<LetterId>& word,
                               AttentionKind attention = AttentionKind::Softmax);

// Logits [len+1, states] for one word (letters, without BOS).
Eigen::MatrixXd naive_logits(const Network& net, const std::vector<LetterId>& word,
                             AttentionKind attention = AttentionKind::Softmax);

// The same as a plain float32 framework computes it (Arithmetic::Float32 in forward.hpp says
// the order), written densely: every product and sum in float32, every term (zeros and
// underflowed weights included), each sum in ascending order of its index, exp as std::exp on
// a float. Compiled without contraction into fused multiply-adds (tests/CMakeLists.txt).
Eigen::MatrixXd naive_logits_float32(const Network& net, const std::vector<LetterId>& word,
                                     AttentionKind attention = AttentionKind::Softmax);

// The argmax state at every position; -1 where the maximum is not unique.
std::vector<int> naive_states(const Network& net, const std::vector<LetterId>& word,
                              AttentionKind attention = AttentionKind::Softmax);

}  // namespace krc::test
