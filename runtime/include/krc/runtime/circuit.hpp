#pragma once
// The circuit of a compiled network as a file interpretability tools can score against: nodes
// `input`, `a{L}.h{H}` (every head), `m{L}` (every MLP block), `logits`, and edges named as the
// Mechanistic Interpretability Benchmark (MIB) names them, `a0.h1->m2`, `input->a1.h0<q>`
// (q, k and v inputs of a head told apart). Edges are derived from the weights' supports: an
// edge runs from W to a later R when some residual dimension is written by W (a nonzero of its
// output matrix or bias) and read by R (a nonzero row of R's input matrix), and it records the
// named residual subspaces it travels through. Every node and edge carries its typed role and
// what it means for the automaton (runtime/README.md, "The circuit file").
//
// Granularity: `head` makes each edge one unit of ablation; `subspace` splits each edge into
// one unit per residual subspace it travels through.
//
// The check (check_circuit) runs the network in float64 with every reader's input rebuilt as
// the sum of its in-circuit units only (zero ablation of everything else) and requires every
// position of every tested word to give the automaton's state; then, for each unit alone, it
// removes that unit's contribution from its one reader's input and looks for a tested word whose
// answer changes (necessary, with the word as witness) or marks the unit redundant.
//
// Ablation: zero (the unit's contribution removed, as above) or mean (replaced by its mean over
// the reference words, position by position, as TransformerLens's mean ablation averages an
// activation over the batch: the writer's output at position t averaged over the reference
// words that reach t, in the whole network's pass). Under mean ablation a unit whose
// contribution is the same on every word (a position's code, a constant) changes nothing; the
// check then searches a zero-ablation witness for it and lists it as necessary only under zero
// ablation ("zero_only").
#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

enum class CircuitGranularity { Head, Subspace };
const char* to_string(CircuitGranularity granularity);
CircuitGranularity circuit_granularity_from_string(const std::string& s);  // invalid_argument

enum class CircuitAblation { Zero, Mean };
const char* to_string(CircuitAblation ablation);
CircuitAblation circuit_ablation_from_string(const std::string& s);  // invalid_argument

struct CircuitCheckOptions {
  // All words of the longest length with at most this many words (and at most max_len).
  long long max_exhaustive_words = 512;
  long long random_words = 32;
  int random_length = 0;  // 0: min(max_len, 24)
  std::uint64_t seed = 1;
  CircuitAblation ablation = CircuitAblation::Zero;
  // Mean ablation's reference words (each at most max_len letters); empty: the tested words.
  std::vector<std::vector<LetterId>> reference_words;
};

// The words the check tests, in its order: all words of the longest length with at most
// max_exhaustive_words words (and at most max_len letters), then random_words seeded random
// words (std::mt19937_64(seed)) of random_length letters (0: min(max_len, 24)). `description`,
// when given, gets their JSON summary (exhaustive_length, exhaustive_words, random_words,
// random_length, seed), as the check records it. Python's torch check tests these same words.
std::vector<std::vector<LetterId>> circuit_check_words(const Network& network,
                                                       const CircuitCheckOptions& options,
                                                       nlohmann::json* description = nullptr);

// The circuit file (JSON) of `network` at `granularity`, without the check.
nlohmann::json circuit_json(const Network& network, CircuitGranularity granularity);

// The logits [word.size() + 1, states] of the circuit alone on `word` (every unit of
// `granularity` kept, zero ablation of nothing else), by the check's float64 pass with the
// network's own attention kind: what the check compares with the automaton. Every unit kept,
// it is the whole network, so it equals krc's forward pass in float64 up to rounding (a test
// checks that). Throws std::invalid_argument for a word longer than max_len or a letter outside
// the vocabulary.
Eigen::MatrixXd circuit_logits(const Network& network, const std::vector<LetterId>& word,
                               CircuitGranularity granularity = CircuitGranularity::Head);

// Runs the check described above on `circuit` (as circuit_json made it for `network`) and
// records it there: a "check" member, and per unit "necessary" with a "witness" or
// "redundant": true. Returns whether the circuit alone was right at every position. Throws
// LimitError when the activations of one word would not fit the memory budget.
bool check_circuit(const Network& network, const Automaton& automaton, nlohmann::json& circuit,
                   const CircuitCheckOptions& options = {});

}  // namespace krc
