#pragma once
// Benchmark suites for `krc bench <suite> [options]`. Each suite lives in its owner's file and
// registers itself here (like command.hpp), so adding one does not touch bench_command.cpp.
// `krc bench` alone lists the registered suites.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace krc::cli {

struct BenchSuite {
  std::string name;
  std::string summary;
  // Adds the suite's options to `sub` and returns what to run once they are parsed
  // (the exit status: 0 ok).
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<BenchSuite>& bench_suite_registry();

struct RegisterBenchSuite {
  explicit RegisterBenchSuite(BenchSuite suite) {
    bench_suite_registry().push_back(std::move(suite));
  }
};

}  // namespace krc::cli
