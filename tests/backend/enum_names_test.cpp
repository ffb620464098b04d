// Every enum's name table: the names users type and read (README, --help), each parsing back
// to its value, and the CLI's choices are the same list.
#include <doctest/doctest.h>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "krc/automata/machine_outputs.hpp"
#include "krc/automata/name_table.hpp"
#include "krc/backend/compile.hpp"
#include "krc/backend/plan.hpp"
#include "krc/runtime/network.hpp"
#include "krc/runtime/verifier.hpp"

using namespace krc;

namespace {
// Every enumerator's name, counted by the enum itself (krc/automata/name_table.hpp's enum_count).
template <typename Enum>
std::vector<std::string> printed() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < enum_count<Enum>; ++i) out.push_back(to_string(static_cast<Enum>(i)));
  return out;
}
using Names = std::vector<std::string>;
}  // namespace

TEST_CASE("strategies, attention kinds and output kinds: printed, parsed and offered alike") {
  // The names README and --help document.
  CHECK(printed<Strategy>() == Names{"auto", "scan", "kr", "onelayer"});
  CHECK(strategy_names() == printed<Strategy>());
  for (std::size_t i = 0; i < enum_count<Strategy>; ++i)
    CHECK(strategy_from_string(to_string(static_cast<Strategy>(i))) == static_cast<Strategy>(i));
  CHECK_THROWS_WITH_AS(strategy_from_string("fast"),
                       "unknown strategy 'fast' (auto, scan, kr or onelayer)",
                       std::invalid_argument);

  CHECK(attention_kind_names() == Names{"softmax", "hard", "hardmax"});
  for (std::size_t i = 0; i < enum_count<AttentionKind>; ++i)
    CHECK(attention_kind_from_string(attention_kind_names()[i]) == static_cast<AttentionKind>(i));
  CHECK(printed<HeadKind>() == Names{"select", "average"});
  CHECK(head_kind_from_string("average") == HeadKind::Average);
  CHECK_THROWS_AS(head_kind_from_string("Select"), std::invalid_argument);

  CHECK(output_kind_names() == Names{"state", "accepting", "mealy", "moore"});
  for (std::size_t i = 0; i < enum_count<OutputKind>; ++i)
    CHECK(output_kind_from_string(output_kind_names()[i]) == static_cast<OutputKind>(i));
  CHECK(printed<VerifyPart>() == Names{"exhaustive", "random"});
}

TEST_CASE("the plan's forms print distinct names (krc info and the plan JSON read them)") {
  const std::vector<Names> all{printed<ScanForm>(), printed<LevelMode>(), printed<CascadeForm>(),
                               printed<WalkForm>(), printed<ContextCode>()};
  for (const Names& names : all) {
    CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
    for (const auto& name : names) CHECK(name != "?");
  }
  CHECK(to_string(LevelMode::Counters) == std::string("counters"));
  CHECK(to_string(CascadeForm::TimeShiftedMemory) == std::string("time-shifted memory"));
  CHECK(to_string(ContextCode::LatestFirst) == std::string("latest first"));
}
