#pragma once
// Strategy `scan`: the whole automaton as one parallel prefix over its letters'
// transformations (Liu et al., Theorem 1). Works for every automaton; depth ceil(log2 max_len).
#include "krc/automaton.hpp"
#include "krc/program.hpp"

namespace krc {

Program scan_program(const Automaton& automaton, int max_len);

}  // namespace krc
