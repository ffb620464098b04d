// Every tool that meets an automaton without letters says one clause in full, "the alphabet is
// empty: the network reads only the empty word", then its own reason: compile, run, verify
// (both refusals and the report), info and bench forward. The clause is written here as the
// specification, not read from krc's function, so a tool that drifts from it fails.
#include <doctest/doctest.h>

#include "test_support.hpp"

using krc::test::contains;
using krc::test::run_krc;

namespace {

constexpr const char* kClause = "the alphabet is empty: the network reads only the empty word";

}  // namespace

TEST_CASE("empty alphabet: every tool's message says the one clause, then its own tail") {
  krc::test::TempDir dir;
  const std::string file = krc::test::write_file(
      dir, "two.json",
      R"({"states": ["a", "b"], "alphabet": [], "initial": "b", "transitions": {}})");
  const std::string model = (dir / "two.safetensors").string();
  const auto compile = run_krc({"compile", file, "-o", model, "--max-len", "8"});
  REQUIRE(compile.status == 0);
  CHECK(contains(compile.err, std::string("krc: ") + kClause + " (no layers"));

  const auto letter = run_krc({"run", model, "a"});
  CHECK(letter.status == 2);
  CHECK(contains(letter.err, std::string("not in the network's alphabet (") + kClause + ")"));

  const auto random = run_krc({"verify", model, "--random", "5"});
  CHECK(random.status == 2);
  CHECK(contains(random.err, std::string(kClause) + ", so there are no random words"));
  const auto exhaustive = run_krc({"verify", model, "--exhaustive", "1"});
  CHECK(exhaustive.status == 2);
  CHECK(contains(exhaustive.err, std::string(kClause) + " (exhaustive length 0 only)"));
  const auto verify = run_krc({"verify", model});
  CHECK(verify.status == 0);
  CHECK(contains(verify.out, std::string("exhaustive: the empty word (") + kClause + ")"));

  const auto info = run_krc({"info", model});
  CHECK(info.status == 0);
  CHECK(contains(info.out, std::string("layers: none (") + kClause + ")"));

  const auto bench = run_krc({"bench", "forward", "--file", model});
  CHECK(bench.status == 2);
  CHECK(contains(bench.err, std::string(kClause) + ", so there are no random words to time"));
}
