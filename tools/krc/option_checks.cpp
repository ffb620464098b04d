#include "option_checks.hpp"

#include <charconv>
#include <filesystem>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/backend/compile.hpp"

namespace krc::cli {

namespace {

std::string range_text(long long min, long long max) {
  return "[" + with_thousands(min) + ", " + with_thousands(max) + "]";
}

}  // namespace

CLI::Validator integer_in(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        long long parsed = 0;
        const char* end = value.data() + value.size();
        auto [ptr, error] = std::from_chars(value.data(), end, parsed);
        if (error == std::errc() && ptr == end && parsed >= min && parsed <= max) return "";
        return value + " is not an integer in " + range_text(min, max);
      },
      "INT in " + range_text(min, max));
}

CLI::Validator unsigned_64() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        std::uint64_t parsed = 0;
        const char* end = value.data() + value.size();
        auto [ptr, error] = std::from_chars(value.data(), end, parsed);
        if (error == std::errc() && ptr == end) return "";
        return value + " is not an integer in [0, 18,446,744,073,709,551,615] (2^64 - 1)";
      },
      "UINT64");
}

CLI::Validator nonempty_path() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        return value.empty() ? "the path is empty (give a file name, or - for standard output)"
                             : "";
      },
      "PATH");
}

std::vector<std::string> built_strategy_names() {
  std::vector<std::string> names;
  for (const std::string& name : strategy_names())
    if (name != to_string(Strategy::Auto)) names.push_back(name);
  return names;
}

CLI::Validator byte_size() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (parse_byte_size(value)) return "";
        return "'" + value + "' is not a size (examples: 512M, 4G, 1.5GiB, 1000000)";
      },
      "SIZE");
}

}  // namespace krc::cli
