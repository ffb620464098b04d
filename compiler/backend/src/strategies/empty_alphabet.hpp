#pragma once
// An automaton with no letters reads only the empty word, so its network has no layers: the
// embedding of <bos> writes the initial state's one-hot and the unembedding reads it. Every
// strategy builds this same network (a parallel prefix over no letters has no steps, and the
// semigroup of no letters, which the cascade decomposes, is empty).
#include "krc/backend/compile.hpp"

namespace krc {

// Requires automaton.letter_count() == 0.
CompileResult compile_empty_alphabet(const Automaton& automaton, const CompileOptions& options);

}  // namespace krc
