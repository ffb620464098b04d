// `krc circuit FILE [-o circuit.json] [--granularity head|subspace] [--check]`: the network's
// circuit in the MIB circuit JSON with krc's typed roles beside it (runtime/README.md, "The
// circuit file"), and with --check the ablation check of it against the automaton (zero
// ablation, or with --ablation mean mean ablation over the tested words).
#include <iostream>
#include <memory>

#include "command.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/runtime/circuit.hpp"
#include "krc/runtime/weights_file.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"

namespace krc::cli {

namespace {

struct CircuitArguments {
  std::string file, output = "-", granularity = "head", ablation = "zero";
  bool check = false;
  CircuitCheckOptions options;
};

// One line for the terminal: what the file holds and what the check found.
std::string summary(const nlohmann::json& circuit) {
  long long nodes = 0, edges = 0;
  for (const auto& [name, node] : circuit["nodes"].items()) nodes += node["in_graph"].get<bool>();
  edges = static_cast<long long>(circuit["edges"].size());
  std::string out = "circuit (" + circuit["granularity"].get<std::string>() +
                    " granularity): " + std::to_string(nodes) + " nodes, " + std::to_string(edges) +
                    " edges, " + circuit["units"].dump() + " units of ablation, " +
                    circuit["unused_dims"].dump() + " residual dimensions no edge uses\n";
  if (!circuit.contains("check")) return out;
  const auto& check = circuit["check"];
  const auto& only = check["circuit_only"];
  out += "check (" + check["ablation"].get<std::string>() + " ablation, float64): circuit alone " +
         std::string(only["wrong"].get<long long>() == 0 ? "right" : "WRONG") + " at " +
         std::to_string(only["positions"].get<long long>() - only["wrong"].get<long long>()) +
         " of " + only["positions"].dump() + " positions; " + check["necessary"].dump() + " of " +
         check["units"].dump() + " units necessary, " + std::to_string(check["redundant"].size()) +
         " redundant\n";
  for (const auto& name : check["redundant"])
    out += "  redundant: " + name.get<std::string>() + "\n";
  if (check.contains("zero_only"))
    for (const auto& name : check["zero_only"])
      out += "  necessary only under zero ablation: " + name.get<std::string>() + "\n";
  if (only.contains("first_wrong")) out += "  first wrong: " + only["first_wrong"].dump() + "\n";
  return out;
}

int run_circuit(const CircuitArguments& a) {
  if (a.output != "-") front_door::refuse_output_over_inputs(a.output, {a.file});
  const Network network = load_network(a.file);
  nlohmann::json circuit = circuit_json(network, circuit_granularity_from_string(a.granularity));
  bool right = true;
  if (a.check) {
    const Automaton automaton = automaton_from_json(network.automaton, a.file);
    CircuitCheckOptions options = a.options;
    options.ablation = circuit_ablation_from_string(a.ablation);
    try {
      right = check_circuit(network, automaton, circuit, options);
    } catch (const LimitError& e) {
      throw LimitError(std::string(e.what()) + "; shorter random words (--length) need less");
    }
  }
  front_door::write_output(a.output, circuit.dump(1) + "\n", {.inputs = {a.file}});
  (a.output == "-" ? std::cerr : std::cout) << summary(circuit);
  return right ? 0 : 1;
}

const RegisterCommand circuit_registration{Command{
    "circuit",
    "Write a network's circuit (MIB circuit JSON with typed roles) and check it by ablation", 45,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CircuitArguments>();
      sub.add_option("FILE", a->file, "weights file (.safetensors) written by krc compile")
          ->required();
      sub.add_option("-o,--output", a->output,
                     "where to write the circuit JSON (default: standard output)");
      sub.add_option("--granularity", a->granularity,
                     "head: one unit of ablation per edge (MIB's); subspace: one per edge and "
                     "residual subspace it travels through (default head)")
          ->check(CLI::IsMember({"head", "subspace"}));
      sub.add_flag("--check", a->check,
                   "run the network with everything outside the circuit zero-ablated (every "
                   "position must be right) and each unit alone ablated (a word whose answer "
                   "changes, or the unit is marked redundant); exit status 1 when the circuit "
                   "alone is wrong");
      sub.add_option("--ablation", a->ablation,
                     "how --check ablates a unit: zero (its contribution removed; default) or "
                     "mean (replaced by its writer's output averaged over the tested words, "
                     "position by position); under mean, the units it leaves redundant that "
                     "zero ablation needs are listed as necessary only under zero ablation")
          ->check(CLI::IsMember({"zero", "mean"}));
      sub.add_option("--exhaustive-words", a->options.max_exhaustive_words,
                     "check all words of the longest length with at most this many words "
                     "(default 512)")
          ->check(integer_in(1, 1'000'000));
      sub.add_option("--random", a->options.random_words, "random words checked (default 32)")
          ->check(integer_in(0, 1'000'000));
      sub.add_option("--length", a->options.random_length,
                     "length of the random words (default: min(max_len, 24))")
          ->check(integer_in(1, kMaxDimension));
      sub.add_option("--seed", a->options.seed, "seed of the random words (default 1)")
          ->check(unsigned_64());
      return [a] { return run_circuit(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
