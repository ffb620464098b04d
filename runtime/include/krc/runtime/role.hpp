#pragma once
// What each part of a compiled network computes, as a closed vocabulary (an enum with one
// printed name per entry, like ggml's op table). The backend tags every attention head, MLP
// block and residual subspace with a Role; the weights file stores it (README, "Weights file
// format": roles); `krc info` reads roles instead of parsing names. A head, an MLP block and a
// subspace share the vocabulary: the counter-sum head writes the counter-sum subspace.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace krc {

enum class RoleKind : std::uint8_t {
  Unspecified,  // not recorded (a file written by another tool)
  // Input features, written by the embeddings.
  Token,                // one-hot of the current letter
  Bos,                  // 1 at position 0 only
  Constant,             // 1 everywhere
  PositionCode,         // +-1 bits of max(t - step, 0): keys and queries of exact lookups
  Position,             // t itself: keys of latest-flagged heads
  LogRemaining,         // ln(max_len + 1 - t): the query that makes a head sum instead of average
  BlockCode,            // +-1 bits of the block of t (step 1: of the block before it), blocks of B
  BlockStart,           // 1 at the first position of every block
  LogRemainingInBlock,  // ln(B + 1 - (position of t in its block)): a sum over the block
  LogRemainingBlocks,   // ln(blocks + 1 - (blocks started by t)): a sum over block starts
  LetterBack,           // the letter at t - step (a fetch head and the copy it writes)
  // A parallel prefix (the scan strategy, or a non-solvable level).
  ScanPrefix,   // the running product of transformations (subspace)
  ScanFetch,    // step `step`: the product 2^(step-1) positions back (head, fetched copy)
  ScanCompose,  // step `step`: composition in place (MLP)
  // One level of the Krohn-Rhodes cascade.
  Transition,           // the level's action from (letter, upper coordinates): lookup (MLP)
  ResetFlag,            // 1 where the level resets
  ResetValue,           // the value a reset writes
  GroupElement,         // the permutation a position applies to a component's tiles
  CounterIncrement,     // a Z_p counter's increment at the position
  CounterSum,           // the running sum of increments (head: constant-denominator sum;
                        // step k + 1: the dyadic head of bit k and its block's sum)
  CounterWindowSum,     // the sum over t's block so far (step 1: over the whole block before)
  CounterBlockResidue,  // at a block start: the block before's sum mod p
  CounterBlockSum,      // the sum of those residues over the blocks before t's
  CounterResidue,       // the sum mod p as a one-hot (MLP comb; step 1: the value at t-1)
  Memory,               // the latest reset: head, and the values it copies
  Coordinate,           // the level's coordinate (one-hot over its values)
  PreviousCoordinate,   // the coordinate at t-1, fetched for the levels below
  // A clamped walk on a path of n cells (gridworld), in two layers; `component` is a class
  // mod n plus 1 for the parts that exist per class, a letter plus 1 for per-letter combs.
  WalkSum,          // the running sum S of the moves: a dyadic block's head (step: its bit + 1)
  WalkResidue,      // S mod n as a one-hot (MLP comb, subspace)
  LatestVisit,      // S at the latest position whose S is in the class (head, its copy)
  Departure,        // the classes a letter's moves leave (per-letter comb, one-hot flags)
  DepartureUp,      // which of them it leaves upwards
  LatestDeparture,  // whether the latest departure from the class went up (head, its copy)
  // One attention layer as a contextual mapping (the onelayer strategy).
  LetterCode,       // the number a letter contributes to the value: a digit, or a count weight
  ContextualValue,  // one number per prefix (head: a weighted mean of the letter codes)
  ValueThreshold,   // the value past each threshold between runs of one state (MLP, subspace)
  ValueDecode,      // thresholds passed -> the automaton's state (MLP)
  // The output.
  Decode,  // coordinates -> the automaton's state (MLP)
  State,   // one-hot of the automaton's state
  Count,
};

const char* to_string(RoleKind kind);
RoleKind role_kind_from_string(const std::string& name);  // throws std::invalid_argument

struct Role {
  RoleKind kind = RoleKind::Unspecified;
  int level = 0;      // 1-based cascade level; 0: not part of a level
  int component = 0;  // 1-based component (slot) of the level, or walk class/letter; 0: none
  int counter = 0;    // 1-based counter along the component's composition series; 0: none
  int step = 0;       // scan step (1-based) or how many positions back (t - step); 0: none
  bool operator==(const Role&) const = default;
};

// {"kind": "counter sum", "level": 2, "component": 1, "counter": 3}: zero fields left out.
nlohmann::json role_to_json(const Role& role);
// The inverse; throws std::invalid_argument naming the member that is wrong.
Role role_from_json(const nlohmann::json& json);

// The part of the network a role belongs to, for grouping layers: "level 2", "scan",
// "input", "earlier letters", "contextual mapping", "decode" (or "unspecified").
std::string role_part(const Role& role);
// "level 2 component 1 counter 3: counter sum".
std::string describe(const Role& role);

}  // namespace krc
