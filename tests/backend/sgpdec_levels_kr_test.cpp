// The kr strategy on the 221 random and structured automata of tests/reference/random, whose
// levels follow SgpDec 1.2's depth rule (68 of them place components on other levels than
// the rule before it): every solvable one whose holonomy groups stay small compiles to a
// network that the verifier (oracle: the automaton itself) finds right.
#include <doctest/doctest.h>

#include <filesystem>

#include "krc/automaton_json.hpp"
#include "krc/compile.hpp"
#include "krc/holonomy.hpp"
#include "krc/verifier.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// Groups beyond this order make wide counter lookups (s_pr_17's order-288 group takes
// seconds to compile and half a minute to verify); the other strategies' tests cover them.
constexpr std::uint64_t kMaxGroupOrder = 48;

bool small_and_solvable(const Automaton& a) {
  DecomposeOptions options;
  options.build_tables = false;
  const auto h = HolonomyDecomposition::compute(a, options);
  if (!h.solvable()) return false;
  for (int d = 0; d < h.level_count(); ++d)
    for (const auto& slot : h.level(d).slots)
      if (slot.group.order > kMaxGroupOrder) return false;
  return true;
}

}  // namespace

TEST_CASE("kr: the SgpDec reference automata with small solvable groups verify at max-len 64") {
  const auto dir = test::reference_dir() / "random" / "automata";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    const Automaton a =
        automaton_from_json(nlohmann::json::parse(test::read_text(entry.path())), path);
    if (!small_and_solvable(a)) continue;
    CAPTURE(path);
    CompileOptions compile_options;
    compile_options.strategy = Strategy::Kr;
    compile_options.max_len = 64;
    const Network net = compile(a, compile_options).network;
    VerifyOptions options;
    options.exhaustive_length = 3;
    options.random_words = test::scaled(20);
    options.seed = 2026;
    const VerifyReport report = verify(net, a, options);
    CAPTURE(format_report(report, a));
    CHECK(report.ok());
    ++checked;
  }
  MESSAGE(checked << " reference automata checked");
  CHECK(checked > 150);
}
