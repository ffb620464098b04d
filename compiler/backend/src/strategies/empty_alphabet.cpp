#include "strategies/empty_alphabet.hpp"

#include <stdexcept>

#include "ir/assemble.hpp"
#include "ir/program.hpp"
#include "ir/schedule.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/version.hpp"

namespace krc {

CompileResult compile_empty_alphabet(const Automaton& automaton, const CompileOptions& options) {
  if (automaton.letter_count() != 0)
    throw std::invalid_argument("compile_empty_alphabet: the automaton has letters");
  Program program(vocabulary_of(automaton), automaton.states(), options.max_len);
  const Subspace state = program.layout().allocate("state", automaton.states(), {RoleKind::State});
  // Position 0 (<bos>) is the only position a word of no letters has: the initial state there.
  program.embed_token(0, state[static_cast<int>(automaton.initial())], 1.0f);
  for (int q = 0; q < state.width; ++q) program.unembed(state[q], q, 1.0f);

  CompileResult result;
  result.network = assemble(program, schedule(program));
  result.network.attention = options.attention;
  result.network.automaton = automaton_to_json(automaton);
  // The strategy asked for, auto's choice being scan: a parallel prefix of no steps.
  result.strategy = options.strategy == Strategy::Auto ? Strategy::Scan : options.strategy;
  result.reason =
      "the alphabet is empty: the network reads only the empty word (no layers: <bos>'s "
      "embedding is the initial state, read by the unembedding)";
  auto& compiler = result.network.compiler;
  compiler["strategy"] = to_string(result.strategy);
  compiler["krc_version"] = kVersion;
  compiler["empty_alphabet"] = result.reason;
  // One weight 1 in the embedding and in the unembedding, no sums: exact in every format.
  compiler["precision"] = {
      {"compiled_for", to_string(options.precision)},
      {"exact_in",
       {{"fp32", options.max_len}, {"bf16", options.max_len}, {"fp16", options.max_len}}}};
  if (options.norm != Norm::None) compiler["norm"] = to_string(options.norm);
  return result;
}

}  // namespace krc
