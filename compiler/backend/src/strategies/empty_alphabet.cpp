#include "strategies/empty_alphabet.hpp"

#include <stdexcept>

namespace krc {

Program build_empty_alphabet(const Automaton& automaton, int max_len) {
  if (automaton.letter_count() != 0)
    throw std::invalid_argument("build_empty_alphabet: the automaton has letters");
  Program program(vocabulary_of(automaton), automaton.states(), max_len);
  const Subspace state = program.layout().allocate("state", automaton.states(), {RoleKind::State});
  // Position 0 (<bos>) is the only position a word of no letters has: the initial state there.
  program.embed_token(0, state[static_cast<int>(automaton.initial())], 1.0f);
  for (int q = 0; q < state.width; ++q) program.unembed(state[q], q, 1.0f);
  return program;
}

}  // namespace krc
