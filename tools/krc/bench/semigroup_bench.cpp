// Suite `krc bench semigroup`: enumeration of transformation semigroups of zoo automata
// (T_n, S_6, A_6, ...), and the passes krc info runs over them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench_suite.hpp"
#include "krc/automata/transformation_semigroup.hpp"
#include "krc/automata/zoo.hpp"

namespace krc::cli {
namespace {

struct SemigroupBenchArguments {
  int max_n = 7, runs = 5;
  bool json = false;
};

double median_of_runs_ms(const std::function<void()>& work, int runs) {
  std::vector<double> times;
  for (int r = 0; r < std::max(1, runs); ++r) {
    auto start = std::chrono::steady_clock::now();
    work();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int run_semigroup_bench(const SemigroupBenchArguments& a) {
  std::vector<Automaton> automata;
  for (int n = 5; n <= a.max_n; ++n) automata.push_back(zoo_automaton("full_transformations", n));
  for (const char* family : {"symmetric", "alternating"})
    automata.push_back(zoo_automaton(family, 6));
  automata.push_back(zoo_automaton("gridworld", 64));
  automata.push_back(zoo_automaton("cyclic", 1000));

  nlohmann::json results = nlohmann::json::array();
  if (!a.json)
    std::printf("%-24s %7s %10s %11s %12s %12s %12s\n", "automaton", "states", "elements",
                "enumerate", "elements/s", "aperiodic", "units");
  for (const auto& automaton : automata) {
    // Slow cases (T_8 takes seconds) run once.
    auto first = std::chrono::steady_clock::now();
    auto s = TransformationSemigroup::generate(automaton, false, std::size_t{1} << 26);
    double first_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - first).count();
    int runs = first_ms > 2000 ? 1 : a.runs;
    double enumerate_ms =
        runs == 1 ? first_ms
                  : median_of_runs_ms(
                        [&] {
                          TransformationSemigroup::generate(automaton, false, std::size_t{1} << 26);
                        },
                        runs);
    bool aperiodic = false;
    std::size_t units = 0;
    double aperiodic_ms = median_of_runs_ms([&] { aperiodic = s.is_aperiodic(); }, runs);
    double units_ms = median_of_runs_ms([&] { units = s.group_of_units_order(); }, runs);
    double rate = s.size() / (enumerate_ms / 1000.0);
    results.push_back({{"automaton", automaton.name()},
                       {"states", automaton.state_count()},
                       {"elements", s.size()},
                       {"ms_enumerate", enumerate_ms},
                       {"ms_aperiodic", aperiodic_ms},
                       {"ms_units", units_ms},
                       {"aperiodic", aperiodic},
                       {"group_of_units_order", units}});
    if (!a.json)
      std::printf("%-24s %7zu %10zu %8.2f ms %12.3g %9.2f ms %9.2f ms\n", automaton.name().c_str(),
                  automaton.state_count(), s.size(), enumerate_ms, rate, aperiodic_ms, units_ms);
    std::fflush(stdout);
  }
  if (a.json)
    std::cout << results.dump(1) << "\n";
  else
    std::printf(
        "\nmedian wall times of TransformationSemigroup::generate (S, no identity) and its "
        "passes\n");
  return 0;
}

const RegisterBenchSuite semigroup_suite{BenchSuite{
    "semigroup", "Transformation semigroup enumeration (T_n, S_6, A_6, ...) and its passes",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<SemigroupBenchArguments>();
      sub.add_option("--max-n", a->max_n,
                     "Largest full_transformations n to enumerate (T_8: 16.8M elements)")
          ->check(CLI::Range(5, 8))
          ->capture_default_str();
      sub.add_option("--runs", a->runs, "Runs per case (the median is reported)")
          ->capture_default_str();
      sub.add_flag("--json", a->json, "Print the measurements as JSON");
      return [a] { return run_semigroup_bench(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
