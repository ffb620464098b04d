// `krc verify FILE [--exhaustive L] [--random K] [--length N] [--seed S] [--attention
// softmax|hard|hardmax] [--arithmetic float32|float64-accumulate|float64] [--float64]
// [--threads T] [--json] [--progress]`: runs the network in a
// weights file on every word of one length and on seeded random words, and checks every
// position against the automaton the file carries. Exit 0 all right, 1 a mismatch, 2 bad input.
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "command.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/runtime/verifier.hpp"
#include "krc/runtime/weights_file.hpp"
#include "option_checks.hpp"
#include "precision_line.hpp"
#include "progress_display.hpp"
#include "verify_limits.hpp"

namespace krc::cli {

namespace {

struct VerifyArguments {
  std::string file;
  std::optional<int> exhaustive, length;
  std::optional<long long> random;  // default: the budget (VerifyOptions)
  std::uint64_t seed = 1;
  std::string attention;   // empty: what the network was compiled for
  std::string arithmetic;  // empty: kDefaultArithmetic (or float64 with --float64)
  bool float64 = false, json = false, progress = false;
  int threads = 0;
};

int run_verify(const VerifyArguments& a) {
  const Network network = load_network(a.file);
  const Automaton automaton =
      automaton_from_json(network.automaton, a.file);  // checked by the loader
  auto too_long = [&](const char* option, int value) {
    if (value > network.max_len)
      throw InputError(a.file, option,
                       std::to_string(value) + " is longer than the network's max_len " +
                           std::to_string(network.max_len));
  };
  if (a.exhaustive) too_long("--exhaustive", *a.exhaustive);
  if (a.length) too_long("--length", *a.length);

  VerifyOptions options;
  options.exhaustive_length = a.exhaustive;
  options.random_words = a.random;
  options.random_length = a.length;
  options.seed = a.seed;
  options.forward.attention =
      a.attention.empty() ? network.attention : attention_kind_from_string(a.attention);
  options.forward.arithmetic = a.float64              ? Arithmetic::Float64
                               : a.arithmetic.empty() ? kDefaultArithmetic
                                                      : arithmetic_from_string(a.arithmetic);
  options.forward.threads = a.threads;
  warn_if_uncertified(network.compiler, to_string(options.forward.arithmetic), a.file);
  auto progress = std::make_shared<ProgressDisplay>(a.progress || isatty(STDERR_FILENO));
  options.progress = [progress](const VerifyProgress& p) {
    progress->show(progress_line(p), p.seconds);
  };

  VerifyReport report;
  try {
    report = verify(network, automaton, options);
  } catch (const std::invalid_argument& e) {  // e.g. more words of that length than can be counted
    throw InputError(a.file, "", e.what());
  } catch (const LimitError& e) {
    throw LimitError(std::string(e.what()) +
                     "; shorter random words (--length) or fewer threads (--threads) need less");
  }
  progress->clear();
  if (a.json)
    std::cout << report_to_json(report, automaton).dump(1) << "\n";
  else
    std::cout << format_report(report, automaton);
  return report.ok() ? 0 : 1;
}

const RegisterCommand verify_registration{Command{
    "verify",
    "Check a weights file against its automaton on every word up to a length and on random words",
    30, [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<VerifyArguments>();
      sub.add_option("FILE", a->file, "weights file (.safetensors) written by krc compile")
          ->required();
      sub.add_option("--exhaustive", a->exhaustive,
                     "check all words of this length (default: the longest with at most 100,000 "
                     "words; 0: none)")
          ->check(integer_in(0, kMaxDimension));
      sub.add_option("--random", a->random,
                     "number of random words (default 1000, or fewer, at least 20, when the "
                     "network is so large that they would take more than about a minute; fewer "
                     "than 20, one per thread at least, where those would take more than 8 "
                     "minutes, and the report says so)")
          ->check(integer_in(0, front_door::kMaxRandomWords));
      sub.add_option("--length", a->length, "length of the random words (default: max_len)")
          ->check(integer_in(0, kMaxDimension));
      sub.add_option("--seed", a->seed, "seed of the random words (default 1)")
          ->check(unsigned_64());
      sub.add_option("--attention", a->attention,
                     "softmax, hard (select heads take the argmax) or hardmax (every head, "
                     "average ones too, takes the hardmax; default: what the file was compiled "
                     "for)")
          ->check(CLI::IsMember(attention_kind_names()));
      sub.add_option("--arithmetic", a->arithmetic,
                     std::string("float32 (a plain float32 framework: float32 products and "
                                 "sums), float64-accumulate (float32 activations, float64 sums), "
                                 "float64, bf16 or fp16 (the model cast to that format, as a GPU "
                                 "framework runs it: every tensor rounded, sums in float32) "
                                 "(default ") +
                         to_string(kDefaultArithmetic) + ")")
          ->check(CLI::IsMember(arithmetic_names()));
      sub.add_flag("--float64", a->float64, "the same as --arithmetic float64")
          ->excludes("--arithmetic");
      sub.add_option("--threads", a->threads,
                     "words run in parallel (default: one per core, fewer where that many "
                     "words' buffers would pass the memory budget)")
          ->check(integer_in(0, front_door::kMaxThreads));
      sub.add_flag("--json", a->json, "print the report as JSON");
      sub.add_flag("--progress", a->progress,
                   "show progress on stderr even when it is not a terminal");
      return [a] { return run_verify(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
