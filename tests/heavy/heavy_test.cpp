// The heavy rows of the table of cases (test::heavy_cases(), tests/support/cases.cpp): every
// reference automaton through the krc command at max-len 65536 (kr; scan at 16384, see
// heavy_cases) in a plain float32 framework (issue 10), and compiled for bf16 and fp16 at max-len
// 4096, right in that format (issue 20). Label "heavy": at full size hours of CPU; KRC_HEAVY_SCALE
// (test_support.hpp) chooses the sample of automata and the number of float32 words (every
// automaton and 20 words at scale 1).
#include <doctest/doctest.h>

#include "case_checks.hpp"

using namespace krc;

namespace {

const std::vector<test::Shard>& shards() {
  static const std::vector<test::Shard> all = test::shards_of(test::heavy_cases());
  return all;
}

// No other test here, so that the label "heavy" selects only these (the table's names are
// checked in the backend's "cases:" test).
[[maybe_unused]] const int kRegistered = test::register_shards<shards>(__FILE__);

}  // namespace
