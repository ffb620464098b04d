#pragma once
// An automaton with no letters reads only the empty word, so its network has no layers: the
// embedding of <bos> writes the initial state's one-hot and the unembedding reads it. Every
// strategy plans this same network (strategy.hpp's EmptyAlphabetPlan: a parallel prefix over no
// letters has no steps, and the semigroup of no letters, which the cascade decomposes, is empty).
#include "ir/program.hpp"
#include "krc/automata/automaton.hpp"

namespace krc {

// The operations of that network. Requires automaton.letter_count() == 0.
Program build_empty_alphabet(const Automaton& automaton, int max_len);

}  // namespace krc
