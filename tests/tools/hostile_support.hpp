#pragma once
// What the hostile-input tests share: running krc under a memory budget and an address-space
// limit, and checking the child's measured peak against the budget.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace krc::test {

// AddressSanitizer reserves terabytes of address space (no RLIMIT_AS then) and keeps freed
// memory in quarantine (256 MB) beside shadow memory: its peaks get that much slack.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// krc ARGS --max-memory BUDGET, with its address space limited to the budget plus 1 GiB (code,
// thread stacks and malloc arenas), so that a run that ignored the budget fails fast.
inline ChildResult run_budgeted(std::vector<std::string> args, std::uint64_t budget) {
  args.push_back("--max-memory");
  args.push_back(std::to_string(budget));
  ChildSpec spec(args);
  if (!kSanitized) spec.address_space = budget + (std::uint64_t{1} << 30);
  return run_child(spec);
}

inline void check_peak_under(const ChildResult& r, std::uint64_t budget) {
  const std::uint64_t allowed = budget + (kSanitized ? std::uint64_t{1} << 30 : 0);
  CAPTURE(r.peak_bytes);
  CHECK(r.peak_bytes < allowed);
}

}  // namespace krc::test
