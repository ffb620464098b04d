// Every reference automaton, compiled with each strategy at max-len 16384, run in the PyTorch
// module in plain float32 (every tensor and every sum) on random words of full length, against
// the automaton itself (issue 10: "right wherever the weights run"). The networks that go wrong
// today are listed in one place, kKnownFloat32Failures; the test reports, for every network
// that goes wrong, from which position and how often, and fails on any network that goes
// wrong without being listed. Heavy: dense attention is T^2 per head, and a kr counter's comb
// has 2 hidden units per possible count, all evaluated at every position, as a framework
// does; ctest labels it "heavy". KRC_HEAVY_SCALE (test_support.hpp) chooses the sample of
// automata and the number of words (every automaton and 3 words at scale 1).
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "torch_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

constexpr int kMaxLen = 16384;

// (automaton, strategy) whose network goes wrong in plain float32 today: kr networks whose
// counters' combs read counts near max_len through ramps whose float32 sums drift (README
// "In a plain float32 framework"). Float32-exact counters (issue 10 part 2) are to empty it.
const std::set<std::pair<std::string, std::string>> kKnownFloat32Failures = {
    {"alternating_4", "kr"},
    {"cyclic_8", "kr"},
    {"dihedral_4", "kr"},
    {"full_transformations_3", "kr"},
    {"full_transformations_4", "kr"},
    {"quaternion", "kr"},
    {"symmetric_4", "kr"},
};

struct Outcome {
  std::string automaton;
  long long wrong = 0;   // positions, over all words
  long long first = -1;  // the earliest wrong position over all words
  int first_word = -1;   // the word it occurs in
  double seconds = 0;
};

Outcome run_table_row(const test::TempDir& dir, const std::string& name,
                      const std::string& strategy, int words, std::uint64_t seed) {
  Outcome o{name};
  const std::string model = (dir / (name + "." + strategy + ".safetensors")).string();
  const auto compiled =
      test::run_krc({"compile", (test::reference_dir() / "automata" / (name + ".json")).string(),
                     "-o", model, "--strategy", strategy, "--max-len", std::to_string(kMaxLen)});
  REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
  const Automaton automaton = test::reference_automaton(name);
  std::mt19937_64 rng(seed);
  const test::Words w = test::random_words(automaton, rng, words, kMaxLen, kMaxLen);
  const auto start = std::chrono::steady_clock::now();
  // Sparse MLPs: the same float32 products as the dense product, each output summing its
  // nonzero terms in index order (a dense pass costs several times more here; the module's
  // test checks the two against each other).
  const auto out = test::run_krc_torch(dir, model, w.letters, {"--sparse-mlp"});
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int i = 0; i < words; ++i) {
    const json& states = out[i]["states"];
    REQUIRE(states.size() == w.states[i].size());
    for (std::size_t t = 0; t < states.size(); ++t)
      if (states[t] != w.states[i][t]) {
        ++o.wrong;
        if (o.first < 0 || static_cast<long long>(t) < o.first) {
          o.first = static_cast<long long>(t);
          o.first_word = i;
        }
      }
    std::filesystem::remove(model);
  }
  return o;
}

void check_table(const std::string& strategy) {
  test::TempDir dir;
  const int words = static_cast<int>(test::heavy_scaled(3));
  std::ostringstream table;
  table << strategy << " networks at max-len " << kMaxLen << ", " << words
        << " random words of full length each, plain float32 in tools/krc_torch.py:\n";
  std::set<std::pair<std::string, std::string>> failing;
  std::uint64_t seed = 100;
  for (const auto& name : test::heavy_sample(test::reference_automaton_names())) {
    CAPTURE(name);
    const Outcome o = run_table_row(dir, name, strategy, words, ++seed);
    std::ostringstream row;
    row << "  " << name << ": ";
    if (o.wrong == 0) {
      row << "right";
    } else {
      failing.insert({name, strategy});
      row << o.wrong << " wrong positions, the first at " << o.first << " (word " << o.first_word
          << ")";
    }
    row << " (" << static_cast<int>(o.seconds) << " s)\n";
    std::cerr << row.str() << std::flush;  // progress: the whole table takes long
    table << row.str();
  }
  MESSAGE(table.str());
  for (const auto& f : failing) {
    CAPTURE(f.first);
    CHECK_MESSAGE(kKnownFloat32Failures.count(f) == 1,
                  "goes wrong in float32 and is not in kKnownFloat32Failures");
  }
  for (const auto& k : kKnownFloat32Failures)
    if (k.second == strategy && failing.count(k) == 0)
      MESSAGE(k.first << " (" << k.second
                      << ") is right now: remove it from kKnownFloat32Failures");
}

}  // namespace

TEST_CASE("float32 at max-len 16384: every reference automaton, scan, agrees with the automaton") {
  KRC_REQUIRE_TORCH();
  check_table("scan");
}

TEST_CASE(
    "float32 at max-len 16384: every reference automaton, kr, agrees (known failures listed)") {
  KRC_REQUIRE_TORCH();
  check_table("kr");
}
