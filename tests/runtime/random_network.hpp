#pragma once
// Random networks for the runtime tests: random shapes, sparse random weights, several heads
// of both kinds, MLPs with some positive biases. They compute nothing in particular; the
// tests compare implementations on them.
#include <functional>
#include <random>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc::test {

struct RandomNetworkShape {
  int max_len = 12;
  int max_layers = 3;
  int max_heads = 3;
  int max_d_model = 10;
  double density = 0.35;  // fraction of nonzero weights
  float scale = 1.5f;
};

SparseMatrix random_sparse(std::mt19937_64& rng, int rows, int cols, double density);

// A network for `automaton` (vocabulary and states follow it) with random weights.
Network random_network(std::mt19937_64& rng, const Automaton& automaton,
                       const RandomNetworkShape& shape = {});

// m with only the entries (r, c) that `keep` accepts.
SparseMatrix filtered(const SparseMatrix& m, const std::function<bool(int, int)>& keep);

// A random network whose keys repeat: dims [0, k) hold the token alone (no position
// embedding, no layer writes them), and every key reads only them, so a word's keys take at
// most |vocabulary| values in every layer. Dim 0 flags BOS; layer 0 also gets a counter head
// as the compiler builds it: query ln(max_len + 1 - t), key the BOS flag, output weight
// max_len + 1, so that every row keeps all its t + 1 softmax terms.
Network repeated_key_network(std::mt19937_64& rng, const Automaton& a, int max_len);

// A random word over `letters` letters.
std::vector<LetterId> random_word(std::mt19937_64& rng, int letters, int length);

}  // namespace krc::test
