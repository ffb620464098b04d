#pragma once
// Small integer helpers that several passes need (position codes, scan steps, benchmarks).
#include <cstdint>

namespace krc {

// The least b >= 0 with 2^b >= n (0 for n <= 1): the number of doubling steps that reach n.
constexpr int ceil_log2(std::int64_t n) {
  int bits = 0;
  while (bits < 63 && (std::int64_t{1} << bits) < n) ++bits;
  return bits;
}

static_assert(ceil_log2(1) == 0 && ceil_log2(2) == 1 && ceil_log2(3) == 2 && ceil_log2(1024) == 10);

// a mod n in [0, n) for n > 0, also for negative a (C++'s % keeps the sign of a): the cell of a
// walk's level, which steps below 0.
constexpr int floor_mod(long long a, int n) { return static_cast<int>(((a % n) + n) % n); }

static_assert(floor_mod(-1, 5) == 4 && floor_mod(7, 5) == 2 && floor_mod(-10, 5) == 0);

}  // namespace krc
