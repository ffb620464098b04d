// The kr strategy on the 221 random and structured automata of tests/reference/random, whose
// levels follow SgpDec 1.2's depth rule (68 of them place components on other levels than
// the rule before it): every solvable one whose holonomy groups stay small compiles to a
// network that the verifier (oracle: the automaton itself) finds right.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "krc/automata/automaton_json.hpp"
#include "krc/backend/compile.hpp"
#include "krc/decompose/holonomy.hpp"
#include "krc/runtime/verifier.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// Groups beyond this order make wide counter lookups (s_pr_17's order-288 group takes
// seconds to compile and half a minute to verify); the other strategies' tests cover them.
constexpr std::uint64_t kMaxGroupOrder = 48;

// A handful of 9-state automata still compile to networks of 5-105 million nonzeros (r_170_n9k3:
// 105 M, 18 s to compile; r_386 once had 42 layers, 1.3e9 dense parameters), where a word of 64
// letters takes seconds on one core. Those are checked on fewer words (every word of length 1 and
// 2 random ones; measured 2026-11-29: r_170 took 46 s on length 2 and 4 random words, a quarter of
// the test), so that every eligible automaton is still compiled and verified. The others check
// every word of length 3 and 10 random ones (20 until then: 204 networks took 143 s to verify).
constexpr long long kLargeNonzeros = 5'000'000;

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

// Which automata qualify is counted over all 221 at every scale; the networks of a
// KRC_TEST_SCALE sample of those are compiled and verified (under the sanitizers, where each
// takes seconds, 5% of them).
TEST_CASE("kr: the SgpDec reference automata with small solvable groups verify at max-len 64") {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(test::reference_dir() / "random" / "automata"))
    paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  std::vector<Automaton> eligible;
  for (const auto& path : paths) {
    Automaton a = automaton_from_json(nlohmann::json::parse(test::read_text(path)), path.string());
    if (small_and_solvable(a)) eligible.push_back(std::move(a));
  }
  MESSAGE(eligible.size() << " of " << paths.size()
                          << " reference automata are small and solvable");
  CHECK(eligible.size() > 150);
  const auto sample = test::scaled_sample(eligible);
  for (const Automaton& a : sample) {
    CAPTURE(a.name());
    CompileOptions compile_options;
    compile_options.strategy = Strategy::Kr;
    compile_options.max_len = 64;
    const Network net = compile(a, compile_options).network;
    const bool large = net.size().nonzeros > kLargeNonzeros;
    VerifyOptions options;
    options.exhaustive_length = large ? 1 : 3;
    options.random_words = test::scaled(large ? 2 : 10);
    options.seed = 2026;
    const VerifyReport report = verify(net, a, options);
    CAPTURE(format_report(report, a));
    CHECK(report.ok());
  }
  MESSAGE(sample.size() << " of them compiled and verified");
}
