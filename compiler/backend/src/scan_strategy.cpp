#include "krc/scan_strategy.hpp"

#include "krc/prefix_scan.hpp"

namespace krc {

std::vector<std::string> vocabulary_of(const Automaton& automaton) {
  std::vector<std::string> vocab{"<bos>"};
  vocab.insert(vocab.end(), automaton.letters().begin(), automaton.letters().end());
  return vocab;
}

Program scan_program(const Automaton& automaton, int max_len) {
  Program program(vocabulary_of(automaton), automaton.states(), max_len);
  Features features(program);
  PrefixScanSpec spec;
  spec.name = "scan";
  spec.set_labels = automaton.states();
  spec.symbol_labels = automaton.letters();
  for (LetterId a = 0; a < automaton.letter_count(); ++a)
    spec.symbols.push_back(automaton.letter_action(a));
  spec.initial = automaton.initial();
  PrefixScan scan(features, spec);

  // The embedding of a letter is its transformation; BOS holds the identity.
  for (auto [dim, w] : scan.identity_terms()) program.embed_token(0, dim, w);
  for (LetterId a = 0; a < automaton.letter_count(); ++a)
    for (auto [dim, w] : scan.symbol_terms(static_cast<int>(a))) program.embed_token(a + 1, dim, w);
  scan.build("scan step");

  Categorical state = scan.result();
  for (int q = 0; q < state.size(); ++q)
    for (auto [dim, w] : state.indicator[q]) program.unembed(dim, q, w);
  return program;
}

}  // namespace krc
