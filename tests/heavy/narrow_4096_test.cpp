// Issue 20's check: every reference automaton (the classic ones and SgpDec's random ones),
// compiled with --precision bf16 and with --precision fp16 at max-len 4096, is right at every
// position of 3 random words of 4,096 letters in `krc verify --arithmetic` of that format (the
// model cast to it, runtime/README.md "bf16 and fp16"), the automaton being the oracle. Heavy
// (ctest label "heavy"): the narrow arithmetics run dense attention; KRC_HEAVY_SCALE
// (test_support.hpp) chooses the sample of automata (all of them at scale 1).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>

#include "test_support.hpp"

using namespace krc;

namespace {

constexpr int kMaxLen = 4096;

// The description files to check: the classic reference automata and the random ones.
std::vector<std::filesystem::path> automata() {
  std::vector<std::filesystem::path> files;
  for (const auto& name : test::heavy_sample(test::reference_automaton_names()))
    files.push_back(test::reference_dir() / "automata" / (name + ".json"));
  std::vector<std::string> random;
  for (const auto& entry :
       std::filesystem::directory_iterator(test::reference_dir() / "random" / "automata"))
    random.push_back(entry.path().stem().string());
  std::sort(random.begin(), random.end());
  for (const auto& name : test::heavy_sample(random))
    files.push_back(test::reference_dir() / "random" / "automata" / (name + ".json"));
  return files;
}

void check_format(const std::string& format) {
  test::TempDir dir;
  for (const auto& file : automata()) {
    CAPTURE(file.string());
    const std::string model = (dir / (file.stem().string() + ".safetensors")).string();
    const auto compiled = test::run_krc({"compile", file.string(), "-o", model, "--precision",
                                         format, "--max-len", std::to_string(kMaxLen), "--json"});
    REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
    CHECK(nlohmann::json::parse(compiled.out)["precision"]["exact_in"][format] == kMaxLen);
    const auto verified = test::run_krc({"verify", model, "--arithmetic", format, "--exhaustive",
                                         "0", "--random", "3", "--seed", "7", "--json"});
    CHECK_MESSAGE(verified.status == 0, verified.err);
    const auto report = nlohmann::json::parse(verified.out);
    CHECK(report["arithmetic"] == format);
    CHECK(report["random"]["length"] == kMaxLen);
    CHECK(report["positions"] == 3 * (kMaxLen + 1));
    CHECK(report["wrong_positions"] == 0);
    std::cerr << format << " " << file.stem().string() << ": " << report["wrong_positions"]
              << " wrong positions, smallest margin " << report["smallest_margin"] << ", "
              << report["seconds"] << " s\n";
  }
}

}  // namespace

TEST_CASE("bf16 at max-len 4096: reference automata compiled for bf16, every position right") {
  check_format("bf16");
}

TEST_CASE("fp16 at max-len 4096: reference automata compiled for fp16, every position right") {
  check_format("fp16");
}
