// `krc compile AUT -o OUT.safetensors [--strategy auto|scan|kr|onelayer] [--max-len N]
// [--attention softmax|hard] [--complete] [--format F] [--dense] [--json]`: compiles an
// automaton description into transformer weights and says what it built.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "krc/compile.hpp"
#include "krc/input_error.hpp"
#include "krc/load_automaton.hpp"
#include "krc/network_summary.hpp"
#include "krc/verifier.hpp"
#include "krc/weights_file.hpp"
#include "output_file.hpp"

namespace krc::cli {

namespace {

struct CompileArguments {
  std::string input, output;
  std::string strategy = "auto", attention = "softmax", format;
  int max_len = 1024;
  OneLayerOptions onelayer;
  bool complete = false, dense = false, json = false;
};

int run_compile(const CompileArguments& a) {
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  LoadOptions load;
  load.completion.add_sink = a.complete;
  load.format = a.format;
  const Automaton automaton = load_automaton(a.input, load);

  CompileOptions options;
  options.strategy = strategy_from_string(a.strategy);
  options.max_len = a.max_len;
  options.onelayer = a.onelayer;
  options.attention = attention_kind_from_string(a.attention);
  // Stage lines only for compilations slow enough to wonder about.
  const bool tty = isatty(STDERR_FILENO);
  options.progress = [&](const std::string& stage) {
    if (tty && seconds() > 1.0) std::cerr << "krc: " << stage << " (" << int(seconds()) << " s)\n";
  };
  CompileResult result = compile(automaton, options);

  WriteOptions write;
  if (a.dense) write.storage = WriteOptions::Storage::Dense;
  const std::string bytes = network_to_safetensors(result.network, write);
  write_output(a.output, bytes);

  const Network& net = result.network;
  if (a.json) {
    nlohmann::json out = {{"automaton",
                           {{"name", automaton.name()},
                            {"states", automaton.state_count()},
                            {"letters", automaton.letter_count()}}},
                          {"strategy", to_string(result.strategy)},
                          {"reason", result.reason},
                          {"network", network_summary(net)},
                          {"output", a.output},
                          {"bytes", bytes.size()},
                          {"seconds", seconds()}};
    if (result.kr) out["cascade"] = to_json(*result.kr);
    if (result.scan) out["scan"] = to_json(*result.scan);
    if (result.onelayer) out["onelayer"] = to_json(*result.onelayer);
    // The output path comes from the command line and need not be UTF-8.
    std::cout << out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::cout << automaton.name() << ": " << automaton.state_count() << " states, "
            << automaton.letter_count() << " letters\n";
  std::cout << "strategy: " << to_string(result.strategy) << " - " << result.reason << "\n";
  if (result.scan)
    std::cout << "parallel prefix: " << result.scan->steps << " steps over "
              << result.scan->set_size << " states, " << to_string(result.scan->form) << " form"
              << (result.scan->form == ScanForm::ElementOneHot
                      ? " (" + with_thousands(static_cast<long long>(result.scan->monoid_size)) +
                            " monoid elements)"
                      : std::string())
              << "\n";
  if (result.kr) {
    const std::size_t n = result.kr->levels.size();
    std::cout << "cascade: " << n << (n == 1 ? " level" : " levels") << ", "
              << to_string(result.kr->form) << ", " << result.kr->layers << " layers\n";
    std::istringstream lines(plan_text(*result.kr));
    for (std::string line; std::getline(lines, line);) std::cout << "    " << line << "\n";
  }
  if (result.onelayer) std::cout << plan_text(*result.onelayer);
  std::cout << "network: " << network_size_line(net) << "\n";
  std::cout << "wrote " << a.output << " (" << with_thousands(static_cast<long long>(bytes.size()))
            << " bytes) in " << std::fixed;
  std::cout.precision(2);
  std::cout << seconds() << " s\n";
  std::cout << "next: krc verify " << a.output << "\n";
  return 0;
}

const RegisterCommand registration{{
    "compile",
    "Compile an automaton (.json, .dot, .jff) into transformer weights (.safetensors)",
    10,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CompileArguments>();
      sub.add_option("automaton", a->input,
                     "Description file: krc JSON, Graphviz DOT (AALpy, LearnLib) or JFLAP .jff; - "
                     "for stdin")
          ->required();
      sub.add_option("-o,--output", a->output, "Weights file to write (safetensors); - for stdout")
          ->required();
      sub.add_option("--strategy", a->strategy,
                     "auto: build all, keep the one with the fewest layers (ties: the fewest "
                     "parameters)\n"
                     "kr: Krohn-Rhodes cascade, depth independent of --max-len\n"
                     "scan: parallel prefix, ceil(log2 max-len) layers\n"
                     "onelayer: one attention layer (a rank-1 head giving every prefix a number) "
                     "and 1 feed-forward layer; short words only: it says the largest --max-len")
          ->check(CLI::IsMember({"auto", "scan", "kr", "onelayer"}))
          ->capture_default_str();
      sub.add_option("--max-len", a->max_len, "Longest input word the network must handle")
          ->check(CLI::Range(1, 1 << 20))
          ->capture_default_str();
      sub.add_option("--max-onelayer-units", a->onelayer.max_units,
                     "onelayer: most hidden units the decoding may take")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
      sub.add_option("--max-onelayer-values", a->onelayer.max_values,
                     "onelayer: most prefix values the planner may enumerate")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
      sub.add_option("--attention", a->attention,
                     "Attention the network is meant for (verify uses it by default)")
          ->check(CLI::IsMember({"softmax", "hard"}))
          ->capture_default_str();
      sub.add_flag("--complete", a->complete,
                   "Complete a partial DFA with a sink state instead of failing");
      sub.add_option("--format", a->format, "Input format when the extension does not tell")
          ->check(CLI::IsMember({"json", "dot", "jff"}));
      sub.add_flag("--dense", a->dense,
                   "Store every tensor dense (default: sparse where it saves space)");
      sub.add_flag("--json", a->json, "Print the summary as JSON");
      return [a] { return run_compile(*a); };
    },
}};

}  // namespace

}  // namespace krc::cli
