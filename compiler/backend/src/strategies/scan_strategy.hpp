#pragma once
// Strategy `scan`: the whole automaton as one parallel prefix over its letters'
// transformations (Liu et al., Theorem 1). Works for every automaton; depth ceil(log2 T).
#include "ir/program.hpp"
#include "krc/automata/automaton.hpp"
#include "primitives/prefix_scan.hpp"

namespace krc {

// The scan over the letters' transformations, its form chosen (primitives/prefix_scan.hpp).
// integer_form = false keeps to the forms exact in bf16 and fp16 too (the one-hot forms and
// binary coordinates), compared by their dense size.
ScanChoice plan_scan(const Automaton& automaton, int max_len, bool integer_form = true);

// select_sharpness: lambda of the fetches (attention_heads.hpp).
Program build_scan(const Automaton& automaton, int max_len, const ScanChoice& choice,
                   float select_sharpness = 20.0f);

}  // namespace krc
