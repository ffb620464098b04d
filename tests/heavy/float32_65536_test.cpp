// Issue 10's longest check: every reference automaton, compiled with each strategy at max-len
// 65536, passes `krc verify --arithmetic float32` (a plain float32 framework: every product
// rounded to float32, every sum a float32 running sum) on random words of full length, with
// the automaton as the oracle at every position. Heavy (ctest label "heavy"): at full size it
// is hours of CPU; KRC_HEAVY_SCALE (test_support.hpp) chooses the sample of automata and the
// number of words (every automaton and 20 words at scale 1).
#include <doctest/doctest.h>

#include <iostream>
#include <string>

#include "test_support.hpp"

using namespace krc;

namespace {

constexpr int kMaxLen = 65536;

void check_strategy(const std::string& strategy) {
  test::TempDir dir;
  const long long words = test::heavy_scaled(20);
  for (const auto& name : test::heavy_sample(test::reference_automaton_names())) {
    CAPTURE(name);
    const std::string model = (dir / (name + "." + strategy + ".safetensors")).string();
    const auto compiled =
        test::run_krc({"compile", (test::reference_dir() / "automata" / (name + ".json")).string(),
                       "-o", model, "--strategy", strategy, "--max-len", std::to_string(kMaxLen)});
    REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
    const auto verified =
        test::run_krc({"verify", model, "--arithmetic", "float32", "--exhaustive", "0", "--random",
                       std::to_string(words), "--seed", "7", "--json"});
    CHECK_MESSAGE(verified.status == 0, verified.err);
    const auto report = nlohmann::json::parse(verified.out);
    CHECK(report["arithmetic"] == "float32");
    CHECK(report["random"]["length"] == kMaxLen);
    CHECK(report["random"]["words"] == words);
    CHECK(report["positions"] == words * (kMaxLen + 1));
    CHECK(report["wrong_positions"] == 0);
    std::cerr << strategy << " " << name << ": " << report["wrong_positions"]
              << " wrong positions, smallest margin " << report["smallest_margin"] << ", "
              << report["seconds"] << " s\n";
  }
}

}  // namespace

TEST_CASE("float32 verify at max-len 65536: reference automata, scan, every position right") {
  check_strategy("scan");
}

TEST_CASE("float32 verify at max-len 65536: reference automata, kr, every position right") {
  check_strategy("kr");
}
