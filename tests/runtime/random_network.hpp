#pragma once
// Random networks for the runtime tests: random shapes, sparse random weights, several heads
// of both kinds, MLPs with some positive biases. They compute nothing in particular; the
// tests compare implementations on them.
#include <random>

#include "krc/automaton.hpp"
#include "krc/network.hpp"

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

// A random word over `letters` letters.
std::vector<LetterId> random_word(std::mt19937_64& rng, int letters, int length);

}  // namespace krc::test
