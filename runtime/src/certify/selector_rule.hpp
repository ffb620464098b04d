#pragma once
// The selector rule of the scan certifier (compiler/certify.md, "Next: the selector rule"),
// for networks in binary coordinates: the invariant is per state slot, not per window
// transformation. After every layer, slot q of the prefix (its b bits, +-1 each) encodes
// f(q) for f the window's transformation, whatever f is; the fetched copy is cleared to 0.
// A layer's compose MLP is then proved bit by bit: for every written bit (q, i) and every
// state s that the fetched slot q may name, fix the fetched slot to s's code, bound every
// other unit by intervals (an upper bound <= 0: off, contributes exactly 0), enumerate the
// open units' remaining inputs over their value sets, and require the new bit to be y(s)_i,
// the current slot s's bit, in the arithmetic. Cost n^2 b (units of the bit) a layer.
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "certify/interval.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc::certify_detail {

// Where the slots are: the prefix and fetched subspaces, n states of b bits each.
struct SlotLayout {
  int n = 0, b = 0, prefix = 0, fetched = 0;
  int prefix_dim(int q, int i) const { return prefix + q * b + i; }
  int fetched_dim(int q, int i) const { return fetched + q * b + i; }
};

// The layout when the network is a binary-coordinate scan of the automaton's states (the
// subspaces' roles and labels say so), else nothing.
std::optional<SlotLayout> binary_slots(const Network& network, const Automaton& automaton);

// +1 when bit i of state s's code is set, else -1 (the builder's code, prefix_scan.hpp).
inline double code_bit(int s, int i) { return (s >> i) & 1 ? 1.0 : -1.0; }

// The residual just before a layer's MLP, as value sets.
struct PreMlp {
  // Per residual dimension: a prefix bit's values when the bit is -1 ([0]) and +1 ([1]);
  // every other written dimension one interval; static dimensions nothing.
  std::vector<std::vector<bounds::Interval>> sets;
  // [q][s]: fetched slot q's b values when the fetched window sends q to s.
  std::vector<std::vector<std::vector<bounds::Interval>>> selector;
  // The static dimensions' values, one full-width vector per distinct pattern over t.
  std::vector<std::vector<bounds::Interval>> patterns;
};

struct SlotComposeOutcome {
  std::vector<std::vector<bounds::Interval>> sets;  // after the MLP, shaped as PreMlp::sets
  nlohmann::json obligation;
};

// The obligation of layer `layer`'s MLP under the selector rule. `composed`: the slots whose
// bits must become y(x(q)) (every slot, or q0's alone at the last step); `clear`: whether the
// fetched copy must be back to 0 (every step but the last). Throws Refused naming the block.
SlotComposeOutcome slot_compose(const Network& net, bounds::Format format,
                                const std::vector<char>& is_static, const SlotLayout& slots,
                                const PreMlp& pre, int layer, const std::vector<int>& composed,
                                bool clear);

}  // namespace krc::certify_detail
