#pragma once
// What a machine answers besides its state: the Mealy output of each transition, the Moore
// output of each state, the accepting bit. `krc compile --output` compiles the Moore machine
// of the chosen output, minimised modulo that output, so that the network's state at every
// position names the output (automata/README.md, "Outputs").
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc {

enum class OutputKind { State, Accepting, Mealy, Moore };
OutputKind output_kind_from_string(const std::string& s);  // throws std::invalid_argument
const char* to_string(OutputKind kind);
std::vector<std::string> output_kind_names();  // in enum order (the CLI's choices)

// Outputs read from a file; an empty table: the file has none of that kind.
struct MachineOutputs {
  std::vector<std::vector<std::string>> mealy;  // [letter][state]: output of that transition
  std::vector<std::string> moore;               // [state]
  // The description is an acceptor (a regular expression): its output is acceptance even when
  // no state accepts (the empty language).
  bool acceptor = false;
};

// What the file carries: Mealy, else Moore, else accepting (some state accepts, or the
// description is an acceptor), else the bare state.
OutputKind default_output(const Automaton& a, const MachineOutputs& outputs);

// The Moore machine answering `kind` after every prefix, minimised modulo its output.
//   Accepting, Moore: the automaton's reachable states with that output per state.
//   Mealy: states are the reachable pairs (q, the output of the letter just read), starting at
//          (initial, none): the Mealy output after a prefix is the pair's output, which the
//          network can name from its state alone (it cannot see the previous state).
// Then Moore's partition refinement merges states no word tells apart by their outputs.
// States are named by their output ("accept", "reject", the Mealy/Moore output; "-" before any
// letter of a Mealy machine), "#2", "#3"... telling apart states with one output.
struct OutputMachine {
  Automaton automaton;
  std::vector<std::string> output;    // [state of automaton]
  std::size_t before_minimising = 0;  // states of the Moore machine before minimisation
};
OutputMachine output_machine(const Automaton& a, const MachineOutputs& outputs, OutputKind kind);

}  // namespace krc
