#pragma once
// Finite value sets for gpt2_exactness.cpp: where intervals lose what a network's codes keep (a
// scan prefix holds one of the few transformations the automaton reaches, a step writes
// new - old so that the old value cancels), the proof follows groups of residual coordinates
// whose joint value, at every position of every word, lies in a known finite set of vectors.
// Groups are taken independent of each other and of the other positions (their product is a
// superset of what occurs: sound, only looser), and a sublayer that joins groups is evaluated on
// every combination of their values, in exact arithmetic: each sum is checked to be exact in
// float32 in any order (every term a multiple of 2^-g, 2^-g no finer than 2^-149, and the terms'
// magnitudes summing to at most 2^24 * 2^-g, so every partial sum is a float), which makes the
// values the frameworks compute the ones enumerated. Where a group would grow past a cap, a sum
// is not provably exact, or a sublayer reads a coordinate with no set, the coordinates written
// fall back to the intervals alone.
#include <cstddef>
#include <vector>

#include "krc/runtime/network.hpp"

namespace krc {

struct ValueSets {
  std::vector<int> group;                               // per coordinate; -1: an interval only
  std::vector<std::vector<int>> coords;                 // per group
  std::vector<std::vector<std::vector<float>>> values;  // per group: its distinct joint values
};

// Two sets are followed: position 0, which holds BOS and no other position does (one vector,
// `bos`), and every later position, which holds a letter. There the embeddings fl(token +
// position): the coordinates that are the same at every position from 1 form one group (a value
// per letter); another with few values (64 at most) is a group of its own.
ValueSets initial_value_sets(const Network& n, bool bos);

// Layer `index`'s attention: `selecting[h]` when head h's weights are proven exactly 1 and 0,
// so it adds one position's value: any position's from 1 (a group's set holds at every one of
// them) or, with `also` (the sets at position 0 before the layer), position 0's. At position 0
// itself every head selects: its one key has weight exp(0) / exp(0) = 1 exactly.
void attend_value_sets(const Network& n, std::size_t index, const std::vector<bool>& selecting,
                       ValueSets& s, const ValueSets* also);

// Layer `index`'s MLP (x + out(ReLU(in x + b)) + b').
void mlp_value_sets(const Network& n, std::size_t index, ValueSets& s);

// The largest sum of squares of group g's coordinates over its values.
double group_squares(const ValueSets& s, int g);

}  // namespace krc
