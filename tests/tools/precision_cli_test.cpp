// krc compile --precision (compiler/README.md "bf16 and fp16"): bf16 and fp16 refuse the
// strategies without a bound there, naming why and the largest max-len; auto keeps the scan in
// a one-hot form; the metadata records the formats a network is certified in, and krc info
// prints them; the network compiled for bf16 is right in bf16 (the automaton is the oracle).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

std::string zoo(const std::string& name) {
  return (test::source_dir() / "automata" / "zoo" / (name + ".json")).string();
}

}  // namespace

TEST_CASE("krc compile --precision: refusals, the certified formats, and a bf16 network verified") {
  test::TempDir dir;
  const std::string model = (dir / "m.safetensors").string();
  const auto kr = test::run_krc(
      {"compile", zoo("parity"), "-o", model, "--precision", "bf16", "--strategy", "kr"});
  CHECK(kr.status == 2);
  CHECK(test::contains(kr.err, "kr: no construction is known exact in bf16"));
  CHECK(test::contains(kr.err, "the largest max-len: none"));

  const auto narrow = test::run_krc({"compile", zoo("gridworld_4"), "-o", model, "--precision",
                                     "fp16", "--max-len", "64", "--json"});
  REQUIRE_MESSAGE(narrow.status == 0, narrow.err);
  const json summary = json::parse(narrow.out);
  CHECK(summary["strategy"] == "scan");
  CHECK(summary["scan"]["form"] != "integer coordinates");
  CHECK(summary["precision"]["compiled_for"] == "fp16");
  CHECK(summary["precision"]["exact_in"]["fp16"] == 64);
  CHECK(summary["precision"]["exact_in"]["bf16"] == 64);
  const auto info = test::run_krc({"info", model});
  CHECK(test::contains(info.out, "precision: compiled for fp16; exact in"));
  const auto verified = test::run_krc({"verify", model, "--arithmetic", "fp16", "--json"});
  CHECK_MESSAGE(verified.status == 0, verified.err);
  CHECK(json::parse(verified.out)["wrong_positions"] == 0);

  // The float32 scan of gridworld_4 takes the integer form: certified in fp32 only.
  const auto wide = test::run_krc({"compile", zoo("gridworld_4"), "-o", model, "--strategy", "scan",
                                   "--max-len", "64", "--json"});
  REQUIRE(wide.status == 0);
  const json exact = json::parse(wide.out)["precision"]["exact_in"];
  CHECK(json::parse(wide.out)["scan"]["form"] == "integer coordinates");
  CHECK(exact["fp32"] == 64);
  CHECK(exact["bf16"].is_null());
  CHECK(exact["fp16"].is_null());
}
