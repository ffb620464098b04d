// libFuzzer target: regular expressions (regex_reader.hpp). The bytes before the first newline,
// when there is one, are an --alphabet list and the rest the pattern; without a newline the
// whole is the pattern over its own letters. Any input must give an automaton or fail as bad
// input (InputError) or over a limit (LimitError).
#include <cstddef>
#include <cstdint>
#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/frontend/regex_reader.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  krc::set_memory_budget(std::uint64_t{256} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  krc::RegexOptions options;
  options.max_subset_states = 4096;  // each input stays fast; the bound itself is exercised
  std::string pattern = text;
  try {
    if (const auto newline = text.find('\n'); newline != std::string::npos) {
      options.alphabet = krc::parse_alphabet_list(text.substr(0, newline));
      pattern = text.substr(newline + 1);
    }
    const krc::Automaton a = krc::regex_automaton(pattern, options);
    if (a.state_count() == 0) __builtin_trap();
  } catch (const krc::InputError&) {
  } catch (const krc::LimitError&) {
  }
  return 0;
}
