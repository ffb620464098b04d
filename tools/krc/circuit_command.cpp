// `krc circuit FILE [-o circuit.json] [--granularity head|subspace] [--check]`: the network's
// circuit in the MIB circuit JSON with krc's typed roles beside it (runtime/README.md, "The
// circuit file"), and with --check the ablation check of it against the automaton (zero
// ablation, or with --ablation mean mean ablation over the tested words).
#include <iostream>
#include <memory>
#include <sstream>

#include "command.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/bounded_read.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/runtime/circuit.hpp"
#include "krc/runtime/weights_file.hpp"
#include "krc/runtime/word_run.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"

namespace krc::cli {

namespace {

struct CircuitArguments {
  std::string file, output = "-", granularity = "head", ablation = "zero", reference;
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

// Mean ablation's reference words from `path`: a word a line, its letters as `krc run` reads
// them (separated by spaces or commas, or one-character letters run together); blank lines
// are skipped. At most 64 MiB and 1,000,000 words, each at most max_len letters.
std::vector<std::vector<LetterId>> reference_words(const std::string& path, const Network& network,
                                                   const Automaton& automaton) {
  constexpr long long kMaxWords = 1'000'000;
  const std::string text =
      read_bounded(path, {64ULL << 20, "a reference words file may have (64 MiB)", true});
  std::vector<std::vector<LetterId>> words;
  std::istringstream lines(text);
  long long n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string place = path + " line " + std::to_string(n);
    if (static_cast<long long>(words.size()) == kMaxWords)
      throw InputError(path, "line " + std::to_string(n), "more than 1,000,000 reference words");
    std::vector<LetterId> word = parse_word({line}, automaton, place);
    check_word_length(network, word.size(), place);
    words.push_back(std::move(word));
  }
  if (words.empty()) throw InputError(path, "reference words", "no word in the file");
  return words;
}

int run_circuit(const CircuitArguments& a) {
  if (!a.reference.empty() && (!a.check || a.ablation != "mean"))
    throw InputError(a.reference, "--reference",
                     "only the mean-ablation check (--check --ablation mean) averages over "
                     "reference words");
  std::vector<std::string> inputs{a.file};
  if (!a.reference.empty()) inputs.push_back(a.reference);
  if (a.output != "-") front_door::refuse_output_over_inputs(a.output, inputs);
  const Network network = load_network(a.file);
  nlohmann::json circuit = circuit_json(network, circuit_granularity_from_string(a.granularity));
  bool right = true;
  if (a.check) {
    const Automaton automaton = automaton_from_json(network.automaton, a.file);
    CircuitCheckOptions options = a.options;
    options.ablation = circuit_ablation_from_string(a.ablation);
    if (!a.reference.empty())
      options.reference_words = reference_words(a.reference, network, automaton);
    try {
      right = check_circuit(network, automaton, circuit, options);
    } catch (const LimitError& e) {
      throw LimitError(std::string(e.what()) + "; shorter random words (--length) need less");
    } catch (const std::invalid_argument& e) {  // reference words shorter than tested ones
      throw InputError(a.reference, "--reference", e.what());
    }
  }
  front_door::write_output(a.output, circuit.dump(1) + "\n", {.inputs = inputs});
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
      sub.add_option("--reference", a->reference,
                     "with --ablation mean: the words to average over, a word a line (letters "
                     "as krc run reads them; default: the tested words); they must reach every "
                     "tested position");
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
