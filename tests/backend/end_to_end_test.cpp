// End to end: every case of test::end_to_end_cases() (tests/support/cases.hpp) compiled and its
// network run (tests/support/case_checks.cpp), the automaton itself the oracle at every position
// of every tested word. One test per shard of the table, generated below: a row added to the
// table is tested without a line here.
#include <doctest/doctest.h>

#include <algorithm>

#include "case_checks.hpp"

using namespace krc;
using test::Case;

namespace {

// The shards, made once: the test functions below index them.
const std::vector<test::Shard>& shards() {
  static const std::vector<test::Shard> all = test::shards_of(test::end_to_end_cases());
  return all;
}

const int kRegistered = test::register_shards<shards>(__FILE__);

}  // namespace

// A row written twice would be tested twice under one name; every shard is registered.
TEST_CASE("cases: every case of the table has its own name, and every shard is a test") {
  std::vector<std::string> names;
  for (const auto& c : test::end_to_end_cases()) names.push_back(c.name());
  std::vector<std::string> heavy;
  for (const auto& c : test::heavy_cases()) heavy.push_back(c.name());
  std::sort(heavy.begin(), heavy.end());
  CHECK(std::adjacent_find(heavy.begin(), heavy.end()) == heavy.end());
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  CHECK(kRegistered == static_cast<int>(shards().size()));
  std::size_t cases = 0;
  for (const auto& shard : shards()) cases += shard.cases.size();
  CHECK(cases == names.size());
}

TEST_CASE("cases: the compile options carry the case's strategy, max-len and attention") {
  Case c{.strategy = Strategy::Kr, .max_len = 77, .attention = AttentionKind::Hardmax};
  const CompileOptions options = test::compile_options(c, 77);
  CHECK(options.strategy == Strategy::Kr);
  CHECK(options.max_len == 77);
  CHECK(options.attention == AttentionKind::Hardmax);
}
