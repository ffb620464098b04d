#pragma once
// Shared by the backend tests: random words of length max_len through the plain forward pass
// (the oracle in the test support); every position must give the automaton's state.
#include <doctest/doctest.h>

#include <random>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"
#include "naive_forward.hpp"

namespace krc::test {

inline void check_against_automaton(const Automaton& a, const Network& net, int words,
                                    std::mt19937_64& rng, AttentionKind attention) {
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(a.letter_count() - 1));
  for (int w = 0; w < words; ++w) {
    std::vector<LetterId> word(net.max_len);
    for (auto& l : word) l = letter(rng);
    auto expected = a.run(word);
    auto actual = naive_states(net, word, attention);
    for (std::size_t t = 0; t < expected.size(); ++t) {
      CAPTURE(w);
      CAPTURE(t);
      REQUIRE(actual[t] == static_cast<int>(expected[t]));
    }
  }
}

}  // namespace krc::test
