#pragma once
// The attention weights of one query over its keys, as krc's runtime defines them in float64
// (network.hpp, runtime/README.md "What the weights compute"), for the dense passes that need
// the weights themselves: the circuit check's ablation pass (circuit.cpp) and the attention
// picture (tools/draw). The runtime's kernels compute the same weights without writing them
// down (forward/attention_kernel.cpp, key_groups.cpp, key_tree.cpp); tests compare the passes.
//
// Per attention kind and head kind, from the scores s_0..s_t of query row t (keys j <= t):
// - Softmax (every head), and Hard's Average heads: p_j = exp(s_j - m) / sum_i exp(s_i - m),
//   m = max_j s_j, the terms with s_j - m < -746 exact zeros (the runtime skips them: their
//   exp underflows to 0 in double);
// - Hard, Select heads: 1 on the latest position whose score is maximal, 0 elsewhere;
// - Hardmax (every head, Average ones included): 1/|M| on each position of the set M of
//   maximal scores, 0 elsewhere: ties share the weight, none is preferred.
#include <Eigen/Dense>

#include "krc/runtime/network.hpp"

namespace krc {

// The weights over keys 0..t (scores.size() = t + 1 >= 1) in [0, 1], summing to 1 (exactly
// but for softmax's rounding). A NaN score makes every weight NaN.
Eigen::VectorXd attention_weights(const Eigen::VectorXd& scores, AttentionKind attention,
                                  HeadKind kind);

// The scores s_tj = scale * (q_t . k_j) of query row t over keys j = 0..t, each dot summed
// over the head dims in ascending order, as the runtime's float64 kernels sum it. q and k are
// [rows, head_dim].
Eigen::VectorXd attention_scores(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, int t,
                                 double scale);

// A head's weights on a word, [rows, rows]: row t is attention_weights(attention_scores(q, k,
// t, scale)) on columns 0..t and 0 after (causal).
Eigen::MatrixXd attention_pattern(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, double scale,
                                  AttentionKind attention, HeadKind kind);

}  // namespace krc
