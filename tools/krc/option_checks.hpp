#pragma once
// Checks on option values whose messages a user can act on: the range in plain numbers
// (CLI11's NonNegativeNumber prints a 300-digit one), no silent saturation of an integer that
// does not fit, and no empty output path.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace krc::cli {

// A decimal integer in [min, max]: "-1 is not an integer in [0, 1,024]".
CLI::Validator integer_in(long long min, long long max);
// A decimal integer in [0, 2^64 - 1], for seeds: larger ones are refused, not saturated.
CLI::Validator unsigned_64();
// A path that is not empty (for -o).
CLI::Validator nonempty_path();
// A size for --max-memory: "512M", "4G", "1.5GiB", bytes.
CLI::Validator byte_size();

// Every strategy's name but auto's, from the strategy name table: a benchmark names what it
// builds.
std::vector<std::string> built_strategy_names();

}  // namespace krc::cli
