// krc compile --counting (compiler/README.md, "Constant-denominator sums"): the kr cascade's
// counters past max-len 2048 count in blocks by default (combs exact in any summation order);
// --counting dyadic gives the wider network at the depth of max-len 1024 (exact in unit order
// only), and its result is right in krc's arithmetic; a method forced where it is not exact
// even in unit order is refused.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

std::string zoo(const std::string& name) {
  return (test::source_dir() / "automata" / "zoo" / (name + ".json")).string();
}

json compiled(const std::string& model, int max_len, const std::string& counting) {
  const auto run =
      test::run_krc({"compile", zoo("cyclic_7"), "-o", model, "--strategy", "kr", "--max-len",
                     std::to_string(max_len), "--counting", counting, "--json"});
  REQUIRE_MESSAGE(run.status == 0, run.err);
  return json::parse(run.out);
}

}  // namespace

TEST_CASE("krc compile --counting: blocks by default past 2048, dyadic keeps the depth of 1024") {
  test::TempDir dir;
  const std::string model = (dir / "m.safetensors").string();
  const json short_one = compiled(model, 1024, "auto");
  CHECK(short_one["cascade"]["counter_sum"] == "whole");
  const json dyadic = compiled(model, 4096, "dyadic");
  CHECK(dyadic["cascade"]["counter_sum"] == "dyadic");
  CHECK(dyadic["network"]["layers"] == short_one["network"]["layers"]);
  // The automaton at every position of 3 random words of 4096 letters and every word of 6.
  const auto verified =
      test::run_krc({"verify", model, "--random", "3", "--exhaustive", "6", "--json"});
  CHECK_MESSAGE(verified.status == 0, verified.err);
  CHECK(json::parse(verified.out)["ok"] == true);
  const auto text = test::run_krc(
      {"compile", zoo("cyclic_7"), "-o", model, "--strategy", "kr", "--max-len", "4096"});
  CHECK(test::contains(text.out, "counting: blocks of 64"));

  const json blocks = compiled(model, 4096, "auto");
  CHECK(blocks["cascade"]["counter_sum"] == "blocks");
  CHECK(blocks["cascade"]["counter_block"] == 64);
  CHECK(blocks["network"]["layers"].get<int>() > dyadic["network"]["layers"].get<int>());
  CHECK(blocks["network"]["parameters"].get<long>() < dyadic["network"]["parameters"].get<long>());
}

TEST_CASE("krc compile --counting refuses a method where it is not exact") {
  test::TempDir dir;
  const std::string model = (dir / "m.safetensors").string();
  const auto whole = test::run_krc({"compile", zoo("cyclic_7"), "-o", model, "--strategy", "kr",
                                    "--max-len", "4096", "--counting", "whole"});
  CHECK(whole.status == 2);
  CHECK(test::contains(whole.err, "--counting whole: not exact in float32 at max-len 4096"));
  const auto dyadic = test::run_krc({"compile", zoo("cyclic_7"), "-o", model, "--strategy", "kr",
                                     "--max-len", "100000", "--counting", "dyadic"});
  CHECK(dyadic.status == 2);
  CHECK(test::contains(dyadic.err, "(p - 1) max-len < 2^19"));
  const auto bad = test::run_krc({"compile", zoo("cyclic_7"), "-o", model, "--counting", "x"});
  CHECK(bad.status == 2);
}
