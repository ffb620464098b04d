#pragma once
// The forward pass of network.hpp written as plainly as possible, in double precision with
// dense matrices: an oracle for the backend's constructions and for the optimised runtime.
#include <vector>

#include "krc/automaton.hpp"
#include "krc/network.hpp"

namespace krc::test {

// The residual stream after the last layer, [len+1, d_model], for one word.
Eigen::MatrixXd naive_residual(const Network& net, const std::vector<LetterId>& word,
                               AttentionKind attention = AttentionKind::Softmax);

// Logits [len+1, states] for one word (letters, without BOS).
Eigen::MatrixXd naive_logits(const Network& net, const std::vector<LetterId>& word,
                             AttentionKind attention = AttentionKind::Softmax);

// The argmax state at every position; -1 where the maximum is not unique.
std::vector<int> naive_states(const Network& net, const std::vector<LetterId>& word,
                              AttentionKind attention = AttentionKind::Softmax);

// Hardmax everywhere, as Yun et al. (2020) define hardmax attention and Kajitsuka and Sato
// (2024) use it for their negative result: every head, `average` ones included, puts weight
// 1/|M| on each position of M = argmax_j s_tj, tied maxima sharing it uniformly. (The runtime's
// `hard` attention differs: select heads only, ties to the latest position.)
Eigen::MatrixXd naive_logits_hardmax(const Network& net, const std::vector<LetterId>& word);
std::vector<int> naive_states_hardmax(const Network& net, const std::vector<LetterId>& word);

}  // namespace krc::test
