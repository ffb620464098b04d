#pragma once
// A network that is right only if tied maxima share the attention weight, as hardmax defines
// it (network.hpp): the oracle for the dense passes' attention semantics (the circuit check,
// the attention picture) against the runtime's.
//
// The automaton "seen b": states "none" (initial) and "seen"; letter a keeps the state, b goes
// to "seen". The network: one layer, one head of the chosen kind, scale 3. Query 1; key 1 at
// every letter, 0 at <bos>: from position 1 on, every letter ties for the maximum. Value: 100 at
// <bos> (into "none") and the b indicator (into "seen"); "none" also reads a constant
// 1 / (2 (max_len + 1)). So:
// - hardmax (every head): weight 1/t on each letter, none at <bos>: "seen" gets n_b / t >= 1/t,
//   above the constant, exactly when a b was read: right at every position;
// - hard, select head (the latest maximum alone): "seen" is the last letter's b indicator,
//   wrong on "b a";
// - softmax (and hard's average heads): <bos> keeps weight 1 / (1 + t e^3), whose 100 outweighs
//   "seen" (wrong on "a b").
#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc::test {

Automaton seen_b_automaton();

// The network above under `attention`, its head of `kind`; vocabulary <bos>, a, b.
Network tied_network(AttentionKind attention, HeadKind kind, int max_len);

// The weights hardmax, hard (select head) and softmax put on keys 0..t of the tied network's
// head on any word, by the formulas above (t >= 1: every letter ties at score 3, <bos> at 0).
Eigen::VectorXd tied_network_weights(AttentionKind attention, HeadKind kind, int t);

}  // namespace krc::test
