// `krc bench compile [--max-len N ...] [--strategy scan|kr|onelayer|both|all] [--automata DIR |
// --zoo FAMILY --n N ...] [--verify-words K] [--json] [-q]`: what each strategy builds for every
// automaton in a directory (by default the repository's automata/zoo), or for a zoo family at a
// series of sizes, at each max_len — states, layers, width, heads, MLP units (in all and in the
// widest layer), parameters, nonzeros, file size, the parallel prefix's form — and how long
// krc::compile takes; with --verify-words K also how long krc::verify takes on K random words
// of the full max_len. --strategy onelayer|all adds the one-layer strategy; with all three a
// second table puts them side by side, with the largest max_len onelayer reaches.
#include "bench_compile.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_automata.hpp"
#include "bench_suite.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/verifier.hpp"
#include "krc/runtime/weights_file.hpp"
#include "option_checks.hpp"

namespace krc::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct CompileBenchArguments {
  std::vector<int> max_lens{256, 1024, 4096, 8192};
  std::string strategy = "both";
  std::string automata;  // directory; empty: the repository's automata/zoo
  std::string family;    // instead: this zoo family at each of `sizes`
  std::vector<int> sizes;
  long long verify_words = 0;
  bool json = false, quiet = false;
};

// The largest max_len the onelayer strategy reaches for this automaton, 0 when none.
int onelayer_largest_len(const Automaton& automaton) {
  try {
    return plan_onelayer(automaton, 1, OneLayerOptions{}).largest_len;
  } catch (const LimitError&) {
    return 0;
  }
}

// "integer coordinates" (kr: the forms of its scanned levels, each once), "-" without a scan.
std::string scan_forms(const CompileResult& result) {
  std::vector<ScanPlan> scans;
  if (result.scan) scans.push_back(*result.scan);
  if (result.kr && result.strategy == Strategy::Kr)
    for (const auto& level : result.kr->levels)
      if (level.mode == LevelMode::Scan) scans.push_back(level.scan);
  std::string forms;
  for (const auto& scan : scans)
    if (forms.find(to_string(scan.form)) == std::string::npos)
      forms += (forms.empty() ? "" : ", ") + std::string(to_string(scan.form));
  return forms.empty() ? "-" : forms;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Status lines on stderr, but only once the run has taken long enough to wonder about.
class Progress {
 public:
  Progress(bool quiet, int cases) : quiet_(quiet), cases_(cases) {}
  // "[3/92] parity kr max-len 1024": names the next case.
  std::string next_case(const std::string& what) {
    return "[" + std::to_string(++case_) + "/" + std::to_string(cases_) + "] " + what;
  }
  void note(const std::string& line) const {
    if (!quiet_ && seconds_since(start_) > 2.0)
      std::cerr << "krc: bench compile: " << line << std::endl;
  }
  // Inside a verification: a line at most every 10 s.
  void verifying(const std::string& what, const VerifyProgress& p) {
    if (quiet_ || p.seconds < 10.0 * (last_report_ + 1)) return;
    last_report_ = static_cast<int>(p.seconds / 10.0);
    const double percent =
        p.positions_total > 0 ? 100.0 * p.positions_done / p.positions_total : 100.0;
    std::cerr << "krc: bench compile: " << what << ": verified " << static_cast<int>(percent)
              << "% (" << with_thousands(p.words_done) << " of " << with_thousands(p.words_total)
              << " words) in " << static_cast<int>(p.seconds) << " s" << std::endl;
  }
  void new_verification() { last_report_ = 0; }

 private:
  bool quiet_;
  int cases_, case_ = 0;
  Clock::time_point start_ = Clock::now();
  int last_report_ = 0;
};

// krc::verify on `words` random words of length max_len, timed in wall and CPU seconds.
VerifyFigures verify_figures(const Network& network, const Automaton& automaton, int max_len,
                             long long words, const std::string& what, Progress& progress) {
  progress.new_verification();
  progress.note(what + ": verifying " + with_thousands(words) + " random words of length " +
                std::to_string(max_len));
  VerifyOptions verify_options;
  if (automaton.letter_count() > 0) {  // else the verifier's plan: the empty word alone
    verify_options.exhaustive_length = 0;
    verify_options.random_words = words;
    verify_options.random_length = max_len;
  }
  verify_options.forward.attention = network.attention;
  verify_options.progress = [&](const VerifyProgress& p) { progress.verifying(what, p); };
  // CPU time of all threads as well: unlike wall time it does not grow with the machine's load.
  const std::clock_t cpu_start = std::clock();
  const VerifyReport report = verify(network, automaton, verify_options);
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  VerifyFigures v;
  v.words = report.words;
  v.positions = report.positions;
  v.wrong_positions = report.wrong_positions;
  v.seconds = report.seconds;
  v.cpu_seconds = cpu_seconds;
  v.smallest_margin = report.smallest_margin;
  v.threads = report.threads;
  return v;
}

Row measure(const Automaton& automaton, const fs::path& file, Strategy strategy, int max_len,
            long long verify_words, Progress& progress) {
  Row row;
  row.automaton = automaton.name();
  row.file = file.string();
  row.states = automaton.state_count();
  row.letters = automaton.letter_count();
  row.strategy = strategy;
  row.max_len = max_len;
  const std::string what = progress.next_case(row.automaton + " " + to_string(strategy) +
                                              " max-len " + std::to_string(max_len));
  progress.note(what + ": compiling");
  // No letters: no onelayer plan (the network of no layers reads the empty word at any length).
  if (strategy == Strategy::OneLayer && automaton.letter_count() > 0)
    row.onelayer_largest_len = onelayer_largest_len(automaton);

  CompileOptions options;
  options.strategy = strategy;
  options.max_len = max_len;
  std::optional<CompileResult> result;
  const auto start = Clock::now();
  try {
    result = compile(automaton, options);
  } catch (const LimitError& e) {  // over a limit: say so in the row, go on with the others
    row.error = e.what();
    return row;
  } catch (const std::bad_alloc&) {
    row.error = "out of memory";
    return row;
  }
  row.compile_seconds = seconds_since(start);
  const Network& network = result->network;
  row.size = network.size();
  for (int h : row.size.mlp_hidden) {
    row.mlp_hidden_total += h;
    row.mlp_hidden_max = std::max<long long>(row.mlp_hidden_max, h);
  }
  row.scan_form = scan_forms(*result);
  row.bytes = static_cast<long long>(network_to_safetensors(network).size());

  if (verify_words > 0)
    row.verified = verify_figures(network, automaton, max_len, verify_words, what, progress);
  return row;
}

// --strategy: one strategy's name (from its name table), both (scan and kr) or all (the three).
std::vector<std::string> bench_compile_strategy_choices() {
  std::vector<std::string> choices = built_strategy_names();
  choices.insert(choices.end(), {"both", "all"});
  return choices;
}

std::vector<Strategy> chosen_strategies(const std::string& choice) {
  if (choice == "both") return {Strategy::Scan, Strategy::Kr};
  if (choice == "all") return {Strategy::Scan, Strategy::Kr, Strategy::OneLayer};
  return {strategy_from_string(choice)};
}

int run_compile_bench(const CompileBenchArguments& a) {
  const std::vector<Strategy> strategies = chosen_strategies(a.strategy);

  const auto automata = bench_automata(a.automata, a.family, a.sizes);
  Progress progress(a.quiet,
                    static_cast<int>(automata.size() * a.max_lens.size() * strategies.size()));
  std::vector<Row> rows;
  for (const auto& [automaton, file] : automata) {
    for (int max_len : a.max_lens)
      for (Strategy s : strategies)
        rows.push_back(measure(automaton, file, s, max_len, a.verify_words, progress));
  }

  bool all_right = true;
  for (const auto& r : rows)
    if (r.verified && !r.verified->ok()) all_right = false;
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) out.push_back(row_to_json(r));
    std::cout << out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    print_table(rows, a.verify_words > 0);
    if (a.strategy == "all") print_side_by_side(rows, strategies);
  }
  return all_right ? 0 : 1;
}

const RegisterBenchSuite compile_suite{
    BenchSuite{"compile",
               "what each strategy builds (layers, parameters, file size) and compile/verify "
               "times, per automaton",
               [](CLI::App& sub) -> std::function<int()> {
                 auto a = std::make_shared<CompileBenchArguments>();
                 sub.add_option("--max-len", a->max_lens,
                                "one or more max_len values (default 256 1024 4096 8192)")
                     ->check(CLI::Range(1, 1 << 20));
                 sub.add_option("--strategy", a->strategy,
                                "scan, kr, onelayer, both (scan and kr) or all (the three, also "
                                "side by side)")
                     ->check(CLI::IsMember(bench_compile_strategy_choices()))
                     ->capture_default_str();
                 auto* dir = sub.add_option("--automata", a->automata,
                                            "directory of description files (.json, .dot, .gv, "
                                            ".jff); default: the repository's automata/zoo");
                 sub.add_option("--zoo", a->family,
                                "instead of a directory: a zoo family (krc zoo lists them), at "
                                "each size --n")
                     ->excludes(dir);
                 sub.add_option("--n", a->sizes,
                                "sizes of the --zoo family, e.g. --n 8 16 32 64 128 (default: "
                                "its default size)");
                 sub.add_option("--verify-words", a->verify_words,
                                "also verify each network on this many random words of length "
                                "max_len (default 0: off)")
                     ->check(integer_in(0, 1'000'000'000));
                 sub.add_flag("--json", a->json, "print the rows as JSON");
                 sub.add_flag("-q,--quiet", a->quiet, "no progress lines on stderr");
                 return [a] { return run_compile_bench(*a); };
               }}};

}  // namespace
}  // namespace krc::cli
