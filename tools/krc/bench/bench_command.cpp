// `krc bench [SUITE [options]]`: runs one registered benchmark suite, or lists them; and the
// suite `decompose` (the holonomy decomposition's speed against SgpDec).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_suite.hpp"
#include "command.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/decompose/holonomy.hpp"

namespace krc::cli {

std::vector<BenchSuite>& bench_suite_registry() {
  static std::vector<BenchSuite> suites;
  return suites;
}

namespace {

int list_suites() {
  auto suites = bench_suite_registry();
  std::sort(suites.begin(), suites.end(),
            [](const BenchSuite& a, const BenchSuite& b) { return a.name < b.name; });
  std::cout << "benchmark suites (krc bench SUITE --help for options):\n";
  for (const auto& suite : suites) std::cout << "  " << suite.name << "  " << suite.summary << "\n";
  return 0;
}

const RegisterCommand bench_registration{
    Command{"bench", "Run a benchmark suite (krc bench alone lists them)", 90,
            [](CLI::App& sub) -> std::function<int()> {
              sub.require_subcommand(0, 1);
              // The chosen suite's action, set when its subcommand is parsed.
              auto chosen = std::make_shared<std::function<int()>>();
              for (auto& suite : bench_suite_registry()) {
                CLI::App* suite_app = sub.add_subcommand(suite.name, suite.summary);
                auto action = suite.setup(*suite_app);
                suite_app->callback([chosen, action] { *chosen = action; });
              }
              return [chosen] { return *chosen ? (*chosen)() : list_suites(); };
            }}};

}  // namespace

// ---------------------------------------------------------------------------------------
// Suite `decompose`: the holonomy decomposition against SgpDec's published times.

namespace {

namespace fs = std::filesystem;

struct DecomposeBenchArguments {
  std::string reference;  // tests/reference directory
  int max_n = 8, runs = 0;
  bool json = false;
};

// The reference directory: the option, else next to the working directory or the binary.
fs::path find_reference(const std::string& option) {
  if (!option.empty()) return option;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates{"tests/reference"};
  if (!ec) {
    candidates.push_back(exe.parent_path() / ".." / "tests" / "reference");
    candidates.push_back(exe.parent_path() / ".." / ".." / "tests" / "reference");
  }
  for (const auto& c : candidates)
    if (fs::exists(c / "sgpdec_holonomy.json")) return c;
  return {};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Median wall time in milliseconds; fast cases run more often (at most `max_runs`).
double median_ms(const std::function<void()>& work, int max_runs) {
  auto once = [&] {
    auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  std::vector<double> times{once()};
  int runs = times[0] < 20 ? 21 : times[0] < 300 ? 7 : times[0] < 3000 ? 3 : 1;
  if (max_runs > 0) runs = std::min(runs, max_runs);
  while (static_cast<int>(times.size()) < runs) times.push_back(once());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::string milliseconds(double ms) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(ms < 10 ? 3 : ms < 1000 ? 1 : 0);
  s << ms;
  return s.str();
}

// The full transformation monoids 5..max_n from the zoo, then SgpDec's other automata from the
// reference directory, whose timings go into `sgpdec` (left empty when there is none).
std::vector<Automaton> decompose_bench_automata(int max_n, const fs::path& reference,
                                                nlohmann::json& sgpdec) {
  std::vector<Automaton> automata;
  for (int n = 5; n <= max_n; ++n) automata.push_back(zoo_automaton("full_transformations", n));
  sgpdec = nlohmann::json::object();
  if (reference.empty()) {
    std::cerr << "krc: bench: no tests/reference directory found (--reference DIR); SgpDec figures "
                 "left out\n";
    return automata;
  }
  sgpdec = nlohmann::json::parse(read_file(reference / "sgpdec_holonomy.json"));
  for (const auto& [name, _] : sgpdec.items()) {
    if (name.rfind("full_transformations_", 0) == 0) continue;  // already in the list from the zoo
    fs::path file = reference / "automata" / (name + ".json");
    automata.push_back(automaton_from_json(nlohmann::json::parse(read_file(file)), file.string()));
  }
  return automata;
}

int run_decompose_bench(const DecomposeBenchArguments& a) {
  const fs::path reference = find_reference(a.reference);
  nlohmann::json sgpdec;
  const std::vector<Automaton> automata = decompose_bench_automata(a.max_n, reference, sgpdec);
  nlohmann::json results = nlohmann::json::array();
  std::printf("%-24s %6s %7s %6s %9s %12s %12s %12s %12s %8s\n", "automaton", "states", "images",
              "levels", "tuples", "skel+groups", "+tables", "SgpDec s+g", "SgpDec +casc",
              "speedup");
  std::printf("%-24s %6s %7s %6s %9s %12s %12s %12s %12s %8s\n", "", "", "", "", "", "ms", "ms",
              "ms", "ms", "");
  for (const auto& automaton : automata) {
    DecomposeOptions skeleton_only;
    skeleton_only.build_tables = false;
    double skeleton_ms =
        median_ms([&] { HolonomyDecomposition::compute(automaton, skeleton_only); }, a.runs);
    double tables_ms = median_ms([&] { HolonomyDecomposition::compute(automaton); }, a.runs);
    HolonomyDecomposition h = HolonomyDecomposition::compute(automaton);
    nlohmann::json row = {{"automaton", automaton.name()},  {"states", automaton.state_count()},
                          {"images", h.image_count()},      {"levels", h.level_count()},
                          {"tuples", h.reachable().size()}, {"ms_skeleton_groups", skeleton_ms},
                          {"ms_with_tables", tables_ms}};
    std::string theirs_groups = "-", theirs_cascade = "-", speedup = "-";
    if (sgpdec.contains(automaton.name())) {
      double g = sgpdec[automaton.name()].at("sgpdec_ms_skeleton_groups").get<double>();
      double c = sgpdec[automaton.name()].at("sgpdec_ms_with_cascade").get<double>();
      row["sgpdec_ms_skeleton_groups"] = g;
      row["sgpdec_ms_with_cascade"] = c;
      theirs_groups = milliseconds(g);
      theirs_cascade = milliseconds(c);
      speedup = std::to_string(static_cast<long long>(c / tables_ms + 0.5)) + "x";
    }
    results.push_back(row);
    if (!a.json)
      std::printf("%-24s %6zu %7zu %6d %9zu %12s %12s %12s %12s %8s\n", automaton.name().c_str(),
                  automaton.state_count(), h.image_count(), h.level_count(), h.reachable().size(),
                  milliseconds(skeleton_ms).c_str(), milliseconds(tables_ms).c_str(),
                  theirs_groups.c_str(), theirs_cascade.c_str(), speedup.c_str());
    std::fflush(stdout);
  }
  if (a.json) {
    std::cout << results.dump(1) << "\n";
  } else {
    std::printf(
        "\nmedian wall times of HolonomyDecomposition::compute on this machine; SgpDec 1.2.0 "
        "figures\n"
        "from %s (for full_transformations 7 and 8 the project brief gives about 10 s and 276 "
        "s).\n",
        reference.empty() ? "(not found)" : (reference / "sgpdec_holonomy.json").string().c_str());
  }
  return 0;
}

const RegisterBenchSuite decompose_suite{BenchSuite{
    "decompose", "Holonomy decomposition (skeleton, groups, action tables) vs SgpDec",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<DecomposeBenchArguments>();
      sub.add_option("--max-n", a->max_n, "Largest full_transformations n to time")
          ->check(CLI::Range(5, 10))
          ->capture_default_str();
      sub.add_option("--runs", a->runs,
                     "At most this many runs per case (0: 21 for fast cases, fewer for slow)")
          ->capture_default_str();
      sub.add_option("--reference", a->reference,
                     "The tests/reference directory (SgpDec's figures)");
      sub.add_flag("--json", a->json, "Print the measurements as JSON");
      return [a] { return run_decompose_bench(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
