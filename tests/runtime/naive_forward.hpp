#pragma once
// The oracle for the forward pass: network.hpp's formula written out plainly with dense
// double matrices, every softmax term computed, no sparsity, no blocking, no threads.
#include <Eigen/Dense>
#include <vector>

#include "krc/automaton.hpp"
#include "krc/network.hpp"

namespace krc::test {

// Logits [word.size() + 1, states] in float64.
Eigen::MatrixXd naive_logits(const Network& network, const std::vector<LetterId>& word,
                             AttentionKind attention);

}  // namespace krc::test
