// `krc compile AUT|--regex P [--alphabet L] -o OUT.safetensors [--strategy auto|scan|kr|onelayer]
// [--max-len N] [--precision fp32|bf16|fp16] [--norm none|layernorm] [--attention softmax|hard]
// [--max-onelayer-units U] [--max-onelayer-values V] [--input-format F] [--complete]
// [--initial S] [--certify] [--dense] [--json]`:
// compiles an automaton description into transformer weights and says what it built.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <iostream>
#include <sstream>

#include "automaton_input.hpp"
#include "command.hpp"
#include "compile_request.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/machine_outputs.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/backend/compile.hpp"
#include "krc/frontend/load_automaton.hpp"
#include "krc/runtime/network_summary.hpp"
#include "krc/runtime/verifier.hpp"
#include "krc/runtime/weights_file.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"
#include "precision_line.hpp"

namespace krc::cli {

namespace {

// How the cascade's counters sum (compiler/README.md, "Constant-denominator sums").
std::string counting_text(const KrPlan& plan) {
  switch (plan.counter_sum) {
    case CounterSum::Whole:
      return "one head per counter over every position";
    case CounterSum::Dyadic:
      return "dyadic heads (one per bit of t, in the same layer); exact in float32 when the MLP "
             "sums its hidden units in order, which a BLAS may not";
    case CounterSum::Blocks:
      return "blocks of " + std::to_string(plan.counter_block) +
             " positions (two layers more per counter)";
  }
  return {};
}

// The check of an option is the request layer's (compile_request.hpp: its table and its
// check_member / check_range), run while the command line is parsed, before any file is read:
// the command line admits what krc.compile admits, and refuses it in the same words. CLI11 puts
// the flag ahead of the message ("--max-len: 0 is not in [1, 1048576]"), so the layer's own
// flag is left out of it; Python's ValueError reads "max_len 0 is not in [1, 1048576]".
CLI::Validator layer_check(const std::string& keyword) {
  const front_door::RequestOption& option = front_door::request_option(keyword);
  const bool named = !option.names.empty();
  std::string shown;
  for (const auto& n : option.names) shown += (shown.empty() ? "{" : ",") + n;
  shown = named ? shown + "}"
                : "INT in [" + std::to_string(option.min) + ", " + std::to_string(option.max) + "]";
  return CLI::Validator(
      // The table is static: the option outlives every parse.
      [&o = option, keyword, named](std::string& value) -> std::string {
        const std::string flag = front_door::option_name(front_door::Door::CommandLine, keyword);
        try {
          if (named) {
            front_door::check_member(front_door::Door::CommandLine, keyword, value, o.names);
          } else {
            long long parsed = 0;
            const char* end = value.data() + value.size();
            const auto [ptr, error] = std::from_chars(value.data(), end, parsed);
            if (error != std::errc() || ptr != end) return value + " is not an integer";
            front_door::check_range(front_door::Door::CommandLine, keyword, parsed, o.min, o.max);
          }
        } catch (const std::invalid_argument& e) {
          const std::string message = e.what();
          return message.rfind(flag + " ", 0) == 0 ? message.substr(flag.size() + 1) : message;
        }
        return "";
      },
      shown);
}

struct CompileArguments {
  std::string input, output;
  front_door::CompileRequest request;  // the options krc.compile takes as keywords too
  LoadOptions load;
  bool dense = false, json = false;
};

// The request checked against the file: a value CLI11's checks let through is refused here.
front_door::PreparedCompile prepared_request(const CompileArguments& a, const Automaton& automaton,
                                             const MachineOutputs& outputs) {
  try {
    return front_door::prepare_compile(automaton, outputs, a.request, front_door::Door::CommandLine,
                                       a.input);
  } catch (const std::invalid_argument& e) {
    throw InputError("command line", "", e.what());
  }
}

// What the network answers, on stderr before the work: the output kind and what minimising the
// output's Moore machine did, and a network of no layers for an empty alphabet.
void print_output_kind(const front_door::PreparedCompile& prepared) {
  const OutputKind kind = prepared.kind;
  const OutputMachine& machine = prepared.machine;
  const Automaton& automaton = machine.automaton;
  std::cerr << "krc: output " << to_string(kind);
  if (kind != OutputKind::State)
    std::cerr << ": " << machine.before_minimising << " states answer it, minimised to "
              << automaton.state_count() << " ("
              << machine.before_minimising - automaton.state_count()
              << " went); each state is named by its output";
  std::cerr << "\n";
  if (automaton.letter_count() == 0)
    std::cerr << "krc: " << empty_alphabet_clause() << " (no layers: <bos>'s embedding names the "
              << (kind == OutputKind::State ? "initial state" : "output of the initial state")
              << ", position 0 is the only one)\n";
}

std::string weights_bytes(const Network& network, bool dense) {
  WriteOptions write;
  if (dense) write.storage = WriteOptions::Storage::Dense;
  try {
    return network_to_safetensors(network, write);
  } catch (const LimitError& e) {
    throw LimitError(std::string(e.what()) + " (a smaller --max-len makes a smaller network)");
  }
}

// What was written, as --json prints it.
nlohmann::json json_summary(const CompileArguments& a, const front_door::PreparedCompile& prepared,
                            const CompileResult& result, std::size_t bytes, double seconds) {
  const Automaton& automaton = prepared.machine.automaton;
  const Network& net = result.network;
  nlohmann::json summary = {{"output_kind", to_string(prepared.kind)},
                            {"automaton",
                             {{"name", automaton.name()},
                              {"states", automaton.state_count()},
                              {"letters", automaton.letter_count()}}},
                            {"strategy", to_string(result.strategy)},
                            {"precision", net.compiler["precision"]},
                            {"reason", result.reason},
                            {"network", network_summary(net)},
                            {"output", a.output},
                            {"bytes", bytes},
                            {"seconds", seconds}};
  if (result.kr) summary["cascade"] = to_json(*result.kr);
  if (result.walk) summary["cascade"] = to_json(*result.walk);
  if (result.scan) summary["scan"] = to_json(*result.scan);
  if (result.onelayer) summary["onelayer"] = to_json(*result.onelayer);
  if (net.compiler.contains("certified")) summary["certified"] = net.compiler["certified"];
  return summary;
}

// The plan of whichever strategy was kept, as the text summary prints it.
void print_plan(std::ostream& out, const CompileResult& result) {
  if (result.scan)
    out << "parallel prefix: " << result.scan->steps << " steps over " << result.scan->set_size
        << " states, " << to_string(result.scan->form) << " form"
        << (result.scan->form == ScanForm::ElementOneHot
                ? " (" + with_thousands(static_cast<long long>(result.scan->monoid_size)) +
                      " monoid elements)"
                : std::string())
        << ", " << with_thousands(result.scan->units) << " hidden units in the widest step\n";
  if (result.kr) {
    const std::size_t n = result.kr->levels.size();
    out << "cascade: " << n << (n == 1 ? " level" : " levels") << ", " << to_string(result.kr->form)
        << ", " << result.kr->layers << " layers\n";
    std::istringstream lines(plan_text(*result.kr));
    for (std::string line; std::getline(lines, line);) out << "    " << line << "\n";
    const bool counters = std::any_of(result.kr->levels.begin(), result.kr->levels.end(),
                                      [](const auto& l) { return l.mode == LevelMode::Counters; });
    if (counters) out << "    counting: " << counting_text(*result.kr) << "\n";
  }
  if (result.walk)
    out << "cascade: clamped walk, " << result.walk->layers << " layers\n    "
        << plan_text(*result.walk);
  if (result.onelayer) out << plan_text(*result.onelayer);
}

void print_text_summary(std::ostream& out, const CompileArguments& a, const Automaton& automaton,
                        const CompileResult& result, std::size_t bytes, double seconds) {
  const Network& net = result.network;
  out << automaton.name() << ": " << automaton.state_count() << " states, "
      << automaton.letter_count() << " letters\n";
  out << "strategy: " << to_string(result.strategy) << " - " << result.reason << "\n";
  print_plan(out, result);
  out << "network: " << network_size_line(net) << "\n";
  out << precision_line(net.compiler);
  out << certified_line(net.compiler);
  out << "wrote " << a.output << " (" << with_thousands(static_cast<long long>(bytes))
      << " bytes) in " << std::fixed;
  out.precision(2);
  out << seconds << " s\n";
  out << "next: krc verify " << a.output << "\n";
}

int run_compile(const CompileArguments& a) {
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  front_door::refuse_output_over_inputs(a.output, {a.input});
  MachineOutputs outputs;
  LoadOptions load = a.load;
  load.completion.outputs = &outputs;
  const Automaton file_automaton = load_automaton(a.input, load);
  front_door::PreparedCompile prepared = prepared_request(a, file_automaton, outputs);
  print_output_kind(prepared);
  // Stage lines only for compilations slow enough to wonder about.
  const bool tty = isatty(STDERR_FILENO);
  prepared.options.progress = [&](const std::string& stage) {
    if (tty && seconds() > 1.0) std::cerr << "krc: " << stage << " (" << int(seconds()) << " s)\n";
  };
  // compile's refusals name the file (none for --regex: the message names its automaton).
  CompileResult result = front_door::compile_prepared(prepared, a.input);
  // --certify: proved before anything is written; a refusal leaves no output (exit 2).
  front_door::certify_compiled(result.network, prepared.machine.automaton, a.request,
                               front_door::Door::CommandLine, a.input);
  const std::string bytes = weights_bytes(result.network, a.dense);
  front_door::write_output(a.output, bytes, {.inputs = {a.input}});

  // With the weights on standard output, the summary goes to standard error.
  std::ostream& out = a.output == "-" ? std::cerr : std::cout;
  if (a.json)  // the output path comes from the command line and need not be UTF-8
    out << json_summary(a, prepared, result, bytes.size(), seconds())
               .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  else
    print_text_summary(out, a, prepared.machine.automaton, result, bytes.size(), seconds());
  return 0;
}

// The options come in groups, one helper each, called in the order --help lists them. First the
// description file and the weights file; it returns the file option, which the input options need.
CLI::Option* add_file_options(CLI::App& sub, CompileArguments& a) {
  CLI::Option* file =
      sub.add_option("automaton", a.input,
                     "Description file: krc JSON, Graphviz DOT (AALpy, LearnLib), JFLAP .jff or "
                     "HOA; - for stdin")
          ->required();
  sub.add_option("-o,--output", a.output, "Weights file to write (safetensors); - for stdout")
      ->required()
      ->check(nonempty_path());
  return file;
}

// Which construction is built and for which arithmetic and normalisation.
void add_construction_options(CLI::App& sub, CompileArguments& a) {
  sub.add_option("--strategy", a.request.strategy,
                 "auto: build all, keep the one with the fewest layers (ties: the fewest "
                 "parameters)\n"
                 "kr: Krohn-Rhodes cascade, depth independent of --max-len\n"
                 "scan: parallel prefix, ceil(log2 max-len) layers\n"
                 "onelayer: one attention layer (a rank-1 head giving every prefix a number) "
                 "and 1 feed-forward layer; short words only: it says the largest --max-len")
      ->check(layer_check("strategy"))
      ->capture_default_str();
  sub.add_option("--precision", a.request.precision,
                 "The format the network must be exact in: fp32 (a plain float32 "
                 "framework), bf16 or fp16 (the model cast to that format); bf16 and fp16 "
                 "admit only the constructions with a bound there (today the scan's "
                 "one-hot and binary-coordinate forms, the least dense chosen) and refuse "
                 "otherwise")
      ->check(layer_check("precision"))
      ->capture_default_str();
  sub.add_option("--norm", a.request.norm,
                 "none: today's networks\n"
                 "layernorm: for `krc export --format gpt2`: the position fetches (every "
                 "scan step's, kr's from t-1) score with lambda 64 instead of 20, so every "
                 "key but the target loses by at least 128 and float32's softmax gives it "
                 "weight exactly 0: no tiny leak reaches the residual, and the export can "
                 "prove GPT-2's LayerNorms the identity where the residual's bounds allow it "
                 "(at max-len 1024, half of the zoo's scan networks). Same width and depth "
                 "(compiler/README.md, \"When it is exact\")")
      ->check(layer_check("norm"))
      ->capture_default_str();
  sub.add_option("--counting", a.request.counting,
                 "kr: how counters sum their increments (compiler/README.md, "
                 "\"Constant-denominator sums\")\n"
                 "auto: whole up to max-len 2048, dyadic beyond while exact, then blocks\n"
                 "whole: one head over every position (float32 drifts past about 2048)\n"
                 "dyadic: one head per bit of t, exact, the depth of max-len 1024 at every "
                 "max-len; the comb after it takes about 2 (p - 1) max-len units\n"
                 "blocks: blocks of about sqrt(max-len) positions: two layers more per "
                 "counter, about 4 p sqrt(max-len) units")
      ->check(layer_check("counting"))
      ->capture_default_str();
}

// The network's bounds, its attention and what it answers.
void add_size_options(CLI::App& sub, CompileArguments& a) {
  sub.add_option("--max-len", a.request.max_len, "Longest input word the network must handle")
      ->check(layer_check("max_len"))
      ->capture_default_str();
  sub.add_option("--max-onelayer-units", a.request.max_onelayer_units,
                 "onelayer: most hidden units the decoding may take")
      ->check(layer_check("max_onelayer_units"))
      ->capture_default_str();
  sub.add_option("--max-onelayer-values", a.request.max_onelayer_values,
                 "onelayer: most prefix values the planner may enumerate")
      ->check(layer_check("max_onelayer_values"))
      ->capture_default_str();
  sub.add_option("--attention", a.request.attention,
                 "Attention the network is meant for (verify uses it by default)")
      ->check(layer_check("attention"))
      ->capture_default_str();
  // --output is the weights file (-o), so the issue's `--output KIND` is --output-kind.
  sub.add_option("--output-kind", a.request.output_kind,
                 "What the network answers at every position: state, accepting, mealy (the "
                 "output of the letter just read) or moore (default: what the file carries, "
                 "else state)")
      ->check(layer_check("output_kind"));
}

const RegisterCommand compile_registration{{
    "compile",
    "Compile an automaton (.json, .dot, .jff, .hoa) into transformer weights (.safetensors)",
    10,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CompileArguments>();
      CLI::Option* file = add_file_options(sub, *a);
      add_construction_options(sub, *a);
      add_size_options(sub, *a);
      add_automaton_input_options(sub, a->load, file);
      refuse_format_option(sub);
      sub.add_flag("--certify", a->request.certify,
                   "Prove the network before writing it, as krc certify does (every word up to "
                   "--max-len, in the arithmetic --precision names); where certify refuses or "
                   "does not cover the network (today: scan networks), exit 2 "
                   "with its reason and write nothing. The claim goes into the file (krc info)");
      sub.add_flag("--dense", a->dense,
                   "Store every tensor dense (default: sparse where it saves space)");
      sub.add_flag("--json", a->json, "Print the summary as JSON");
      return [a] { return run_compile(*a); };
    },
}};

}  // namespace

}  // namespace krc::cli
