#include "strategies/scan_strategy.hpp"

namespace krc {

namespace {

PrefixScanSpec letters_spec(const Automaton& automaton) {
  PrefixScanSpec spec;
  spec.name = "scan";
  spec.set_labels = automaton.states();
  spec.symbol_labels = automaton.letters();
  for (LetterId a = 0; a < automaton.letter_count(); ++a)
    spec.symbols.push_back(automaton.letter_action(a));
  spec.initial = automaton.initial();
  return spec;
}

}  // namespace

ScanChoice plan_scan(const Automaton& automaton, int max_len, bool integer_form) {
  PrefixScanSpec spec = letters_spec(automaton);
  spec.integer_form = integer_form;
  spec.binary_form = !integer_form;
  return plan_prefix_scan(spec, max_len);
}

Program build_scan(const Automaton& automaton, int max_len, const ScanChoice& choice,
                   float select_sharpness) {
  Program program(vocabulary_of(automaton), automaton.states(), max_len);
  program.set_select_sharpness(select_sharpness);
  Features features(program);
  PrefixScan scan(features, letters_spec(automaton), choice);

  // The embedding of a letter is its transformation; BOS holds the identity.
  for (auto [dim, w] : scan.identity_terms()) program.embed_token(0, dim, w);
  for (LetterId a = 0; a < automaton.letter_count(); ++a)
    for (auto [dim, w] : scan.symbol_terms(static_cast<int>(a))) program.embed_token(a + 1, dim, w);
  scan.build("scan step");
  scan.unembed(program);
  return program;
}

}  // namespace krc
