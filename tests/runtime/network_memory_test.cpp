// The memory budget's model of the forward pass (network_memory.hpp) is an upper bound: the
// heap that preparing a network takes, measured by glibc's allocator statistics, stays within
// prepared_bytes(shape) for compiled networks of every strategy, the one-hot and binary scan
// forms in bf16, and random networks (the digit form: tests/backend/prefix_scan_test.cpp). A
// model that counted an entry too small would fail here.
#include <doctest/doctest.h>

#include <random>

#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "prepared_memory.hpp"
#include "random_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

Network compiled(const Automaton& a, Strategy strategy, Precision precision, int max_len) {
  CompileOptions options;
  options.strategy = strategy;
  options.precision = precision;
  options.max_len = max_len;
  return compile(a, options).network;
}

}  // namespace

TEST_CASE("network memory: preparing a network holds no more than the budget's model counts") {
  if (test::sanitized_build()) return;  // AddressSanitizer's allocator keeps its own counts
  for (const auto& [family, n] : {std::pair{"cyclic", 5}, {"gridworld", 9}, {"symmetric", 3}}) {
    CAPTURE(family);
    const Automaton a = zoo_automaton(family, n);
    test::check_prepared_within_model(compiled(a, Strategy::Scan, Precision::Float32, 1024));
    test::check_prepared_within_model(compiled(a, Strategy::Kr, Precision::Float32, 256));
    test::check_prepared_within_model(compiled(a, Strategy::Scan, Precision::BFloat16, 256));
  }
  // Random maps of 24 and 40 states: the integer scan in fp32, binary coordinates in bf16.
  std::mt19937_64 rng(31);
  for (int states : {24, 40}) {
    CAPTURE(states);
    const Automaton a = test::random_automaton_of_size(rng, states, 3);
    test::check_prepared_within_model(compiled(a, Strategy::Scan, Precision::Float32, 1024));
    test::check_prepared_within_model(compiled(a, Strategy::Scan, Precision::BFloat16, 256));
  }
  for (int seed = 0; seed < 5; ++seed) {
    std::mt19937_64 weights(seed);
    test::check_prepared_within_model(test::random_network(weights, zoo_automaton("cyclic", 4)));
  }
  // The check can fail: the model of an empty network is below what a compiled one holds.
  const Network parity =
      compiled(zoo_automaton("cyclic", 2), Strategy::Scan, Precision::Float32, 64);
  CHECK(test::prepared_heap_bytes(parity) > 0);
}
