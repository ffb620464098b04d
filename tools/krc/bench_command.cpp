// `krc bench [SUITE [options]]`: runs one registered benchmark suite, or lists them.
#include <algorithm>
#include <iostream>
#include <memory>

#include "bench_suite.hpp"
#include "command.hpp"

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

const RegisterCommand bench_command{Command{
    "bench", "Run a benchmark suite (krc bench alone lists them)", 90,
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
}  // namespace krc::cli
