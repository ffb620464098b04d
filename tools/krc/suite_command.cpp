// `krc suite [FILE...] -o DIR [--set small|zoo|none] [--strategies kr,scan] [--norm layernorm]
// [--max-len N] [--random K] [--max-models M] [--max-bytes B] [--json] [--progress]`: many
// compiled networks in one directory, each with its weights, GPT-2 checkpoint, circuit file and
// verify report, and a manifest to load them by (front_door/suite.hpp, tools/README.md "A
// suite"). Exit 0 written, 1 a network's verification found it wrong, 2 anything else wrong;
// nothing is written unless everything is right.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "command.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/thousands.hpp"
#include "option_checks.hpp"
#include "progress_display.hpp"
#include "suite.hpp"
#include "text_table.hpp"

namespace krc::cli {

namespace {

struct SuiteArguments {
  std::string output;
  front_door::SuiteRequest request;
  bool json = false, progress = false;
};

void print_summary(const std::string& output, const front_door::SuiteResult& result) {
  const auto& models = result.manifest["models"];
  std::vector<std::vector<std::string>> cells{
      {"model", "layers", "parameters", "verified positions", "GPT-2 checkpoint"}};
  long long checkpoints = 0;
  for (const auto& row : models) {
    const bool gpt2 = !row["paths"]["gpt2"].is_null();
    checkpoints += gpt2;
    cells.push_back({row["model"].get<std::string>(), row["layers"].dump(),
                     with_thousands(row["parameters"].get<long long>()),
                     with_thousands(row["verify"]["positions"].get<long long>()),
                     gpt2 ? "yes" : "no: " + row["missing"]["gpt2"].get<std::string>()});
  }
  for (const std::string& line : aligned(cells, [](std::size_t c) { return c == 0 || c == 4; }))
    std::cout << line << "\n";
  std::cout << "wrote " << output << "/ (manifest.json and " << models.size() << " models, "
            << checkpoints << " with a GPT-2 checkpoint; " << with_thousands(result.bytes)
            << " bytes) in " << std::fixed;
  std::cout.precision(2);
  std::cout << result.seconds << " s\n";
}

int run_suite(const SuiteArguments& a) {
  auto display = std::make_shared<ProgressDisplay>(a.progress || isatty(STDERR_FILENO));
  auto progress = [display](const front_door::SuiteProgress& p) {
    display->show(front_door::suite_progress_line(p), p.seconds);
  };
  front_door::SuiteResult result;
  try {
    result = front_door::build_suite(a.output, a.request, front_door::Door::CommandLine, progress,
                                     {.inputs = a.request.files});
  } catch (const front_door::SuiteMismatch& e) {
    display->clear();
    std::cerr << "krc: error: " << e.what() << "krc: nothing was written\n";
    return 1;
  } catch (const std::invalid_argument& e) {  // a value CLI11's checks let through
    throw InputError("command line", "", e.what());
  }
  display->clear();
  if (a.json) {
    nlohmann::json summary = {{"output", a.output},
                              {"models", result.manifest["models"].size()},
                              {"bytes", result.bytes},
                              {"seconds", result.seconds},
                              {"manifest", result.manifest}};
    std::cout << summary.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  print_summary(a.output, result);
  return 0;
}

// What --help prints after the options: the directory's layout and examples.
const char* const kSuiteFooter =
    "The directory (built beside its target and renamed into place whole):\n"
    "  manifest.json                    one row per model: automaton, strategy, norm,\n"
    "                                   layers, parameters, formats certified, paths, and\n"
    "                                   why anything is missing\n"
    "  MODEL/weights.safetensors        krc compile's weights file\n"
    "  MODEL/circuit.json               krc circuit's file (head granularity)\n"
    "  MODEL/verify.json                krc verify --json's report (timing left out)\n"
    "  MODEL/gpt2/                      the GPT-2 checkpoint krc export writes, where the\n"
    "                                   network allows one (the manifest says why not)\n"
    "MODEL is AUTOMATON.STRATEGY.NORM. Every network is verified on all words of the\n"
    "longest length with at most 4,096 words and --random words of length --max-len\n"
    "(seed 1). Any failure (a file that does not parse, a strategy that refuses an\n"
    "automaton, a network found wrong: exit 1) writes nothing. See tools/README.md\n"
    "\"A suite\".\n\n"
    "Examples:\n"
    "  krc suite -o suite                 # the small set, kr and scan, layernorm\n"
    "  krc suite --set zoo -o zoo         # every zoo family at its default size\n"
    "  krc suite --set none a.dot b.json --strategies auto -o mine";

// The options come in two groups, one helper each, called in the order --help lists them. First
// which models: the automata, the strategies and norms, and where they go.
void add_model_options(CLI::App& sub, SuiteArguments& a) {
  sub.add_option("FILE", a.request.files,
                 "automaton files (any format krc compile reads), added to the set");
  sub.add_option("-o,--output", a.output, "the suite's directory")
      ->required()
      ->check(nonempty_path());
  sub.add_option("--set", a.request.set,
                 "automata of the zoo: small (parity, flipflop_2, cyclic_3, gridworld_4), zoo "
                 "(every family at its default size) or none (the files only)")
      ->check(CLI::IsMember(front_door::suite_set_names()))
      ->capture_default_str();
  sub.add_option("--strategies", a.request.strategies,
                 "strategies to compile each automaton with, comma-separated (auto, kr, "
                 "scan, onelayer)")
      ->allow_extra_args(false)  // a file after it is a file, not a strategy
      ->delimiter(',')
      ->check(CLI::IsMember(strategy_names()))
      ->capture_default_str();
  sub.add_option("--norm", a.request.norms,
                 "norms, comma-separated (none, layernorm; layernorm is what GPT-2 "
                 "checkpoints need to be provably exact, see krc compile --help)")
      ->allow_extra_args(false)
      ->delimiter(',')
      ->check(CLI::IsMember(norm_names()))
      ->capture_default_str();
}

// The bounds of every network and of the whole suite.
void add_bound_options(CLI::App& sub, SuiteArguments& a) {
  sub.add_option("--max-len", a.request.max_len, "longest input word of every network")
      ->check(CLI::Range(1, front_door::kMaxLenLimit))
      ->capture_default_str();
  sub.add_option("--random", a.request.verify_random,
                 "random words of length --max-len each network is verified on")
      ->check(integer_in(0, 1'000'000))
      ->capture_default_str();
  sub.add_option("--max-models", a.request.max_models,
                 "refuse a suite of more models than this, before compiling any (at most " +
                     std::to_string(front_door::kMaxSuiteModels) + ")")
      ->check(integer_in(1, front_door::kMaxSuiteModels))
      ->capture_default_str();
  sub.add_option("--max-bytes", a.request.max_bytes,
                 "refuse a suite whose files hold more bytes than this (they are built in "
                 "memory and written at the end)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

const RegisterCommand suite_registration{Command{
    "suite",
    "Compile many automata x strategies x norms into one directory of models with a manifest", 46,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<SuiteArguments>();
      sub.footer(kSuiteFooter);
      add_model_options(sub, *a);
      add_bound_options(sub, *a);
      sub.add_flag("--json", a->json, "print the summary (with the manifest) as JSON");
      sub.add_flag("--progress", a->progress,
                   "show progress on stderr even when it is not a terminal");
      return [a] { return run_suite(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
