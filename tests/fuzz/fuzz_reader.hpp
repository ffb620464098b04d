#pragma once
// The shared body of the description-format fuzz targets: any bytes must either give an
// automaton or fail as bad input (InputError) or over a limit (LimitError). Anything else that
// escapes (another exception, a crash, a sanitizer report) is a bug libFuzzer reports.
#include <cstddef>
#include <cstdint>
#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/frontend/load_automaton.hpp"

namespace krc::fuzz {

// A budget well under libFuzzer's default RSS limit (2 GB), so that every size check is
// reachable by a small input.
inline void set_fuzz_budget() { set_memory_budget(std::uint64_t{256} << 20); }

// etf_label: --etf-label's name for an ETF input ("" = krc's choice).
inline int read_description(const std::uint8_t* data, std::size_t size, const char* format,
                            const std::string& etf_label = "") {
  const std::string text(reinterpret_cast<const char*>(data), size);
  LoadOptions options;
  options.format = format;
  options.etf_label = etf_label;
  options.completion.add_sink = size % 2 == 1;  // both the partial and the completing path
  try {
    const Automaton automaton = parse_automaton(text, std::string("fuzz.") + format, options);
    // No letters is a valid automaton (it reads only the empty word); no states is not.
    if (automaton.state_count() == 0) __builtin_trap();
  } catch (const InputError&) {
  } catch (const LimitError&) {
  }
  return 0;
}

}  // namespace krc::fuzz
