#pragma once
// Checking the cases of the table (cases.hpp), and one doctest test per shard generated from it.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "cases.hpp"

namespace krc::test {

// Whether the holonomy decomposition of `a` is solvable (no tables built).
bool solvable(const Automaton& a);

// Compiles and checks every case of the shard (each automaton of a random draw), as its fields
// say.
void run_shard(const Shard& shard);

// doctest registers a test as a function pointer and a name, as TEST_CASE does for a written
// one; the pointer cannot carry the shard, so each index up to kMostShards gets its own function.
inline constexpr std::size_t kMostShards = 48;

template <const std::vector<Shard>& (*Shards)(), std::size_t I>
void run_shard_at() {
  run_shard(Shards().at(I));
}

// Registers one test per shard of Shards() (named by the shard); returns how many. Stops the
// program when the table has more shards than kMostShards.
template <const std::vector<Shard>& (*Shards)(), std::size_t... I>
int register_shards(const char* file, std::index_sequence<I...>) {
  if (Shards().size() > sizeof...(I)) {
    std::fprintf(stderr, "%s: %zu shards, more than kMostShards\n", file, Shards().size());
    std::abort();
  }
  const auto one = [&](doctest::detail::funcType f, std::size_t i) {
    if (i >= Shards().size()) return;
    doctest::detail::regTest(
        doctest::detail::TestCase(f, file, 1, doctest_detail_test_suite_ns::getCurrentTestSuite()) *
        Shards()[i].name.c_str());
  };
  (one(&run_shard_at<Shards, I>, I), ...);
  return static_cast<int>(Shards().size());
}

template <const std::vector<Shard>& (*Shards)()>
int register_shards(const char* file) {
  return register_shards<Shards>(file, std::make_index_sequence<kMostShards>{});
}

}  // namespace krc::test
