#pragma once
// Helpers shared by the test programs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc::test {

// The source tree and the krc binary the tests run ($KRC_BINARY, else the build tree's krc).
// The build tree's paths are compiled into test_support.cpp alone, so the other test sources
// are the same in every clone and ccache shares them.
std::filesystem::path source_dir();
std::string krc_binary();
// The shared reference automata and SgpDec's results for them (copied into the repository
// from ../shared/reference so that a fresh clone can run every test).
std::filesystem::path reference_dir();
std::vector<std::string> reference_automaton_names();    // sorted file stems
Automaton reference_automaton(const std::string& name);  // tests/reference/automata/NAME.json
std::string read_text(const std::filesystem::path& path);
bool contains(const std::string& haystack, const std::string& needle);
// Whether `a` ends in an accepting state after `word` (letters by name; std::invalid_argument
// naming a letter `a` lacks).
bool accepts(const Automaton& a, const std::vector<std::string>& word);
// 1234567 -> "1,234,567", as krc prints counts (written here, not taken from krc).
std::string with_commas(long long n);

// A fresh directory, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Runs the krc binary (KRC_BINARY, else the build tree's krc) with `args`.
struct CommandResult {
  int status;
  std::string out, err;
};
CommandResult run_krc(const std::vector<std::string>& args);

// Writes `bytes` to dir/name and returns the path.
std::string write_file(const TempDir& dir, const std::string& name, const std::string& bytes);

// Runs tools/reference_forward.py (Debian's /usr/bin/python3) on the weights file `model`
// with `args`, the words given one per line on stdin ("a b c": letters separated by spaces);
// returns the JSON object it prints for each word. Fails the test if the script fails.
std::vector<nlohmann::json> run_reference_forward(const TempDir& dir, const std::string& model,
                                                  const std::vector<std::string>& word_lines,
                                                  const std::vector<std::string>& args = {});
// The words as reference_forward.py reads them: one a line, letters by their names in the
// network's vocabulary, separated by commas.
std::vector<std::string> word_lines(const std::vector<std::string>& vocabulary,
                                    const std::vector<std::vector<LetterId>>& words);

// A uniformly random complete automaton with 1..max_states states and 1..max_letters letters.
Automaton random_automaton(std::mt19937_64& rng, int max_states, int max_letters);
// A random complete automaton of exactly n states and `letters` letters (a..), initial state
// q0: each transition rng() % n, in letter-major order.
Automaton random_automaton_of_size(std::mt19937_64& rng, int n, int letters);

// The heavy verification tests scale their counts (random automata, random words) by
// KRC_TEST_SCALE, a number in (0, 1] (default 1: the counts the issues ask for). The sanitizer
// build runs 20-50x slower, so `tools/test.sh --sanitize` sets it to 0.05. scaled(n) >= 1.
double test_scale();
long long scaled(long long n);
// The sample of a fixed table (reference automata, SgpDec's 221) that a test checks at
// KRC_TEST_SCALE: every round(1/scale)-th item from the first, so at least one, and all of them
// at scale 1. A test over a sample says its size; a count over the whole table stays whole.
template <typename T>
std::vector<T> scaled_sample(const std::vector<T>& items) {
  const auto stride = static_cast<std::size_t>(std::max(1LL, std::llround(1.0 / test_scale())));
  std::vector<T> sample;
  for (std::size_t i = 0; i < items.size(); i += stride) sample.push_back(items[i]);
  return sample;
}

// Whether this is the AddressSanitizer build (tools/test.sh --lane and --sanitize), where
// everything runs 20-50x slower: the hostile-input tests then feed smaller floods, which reach
// the same limits.
constexpr bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
  return __has_feature(address_sanitizer);
#else
  return false;
#endif
}

// The heavy tests (ctest label "heavy": every reference automaton at max-len 16384 and 65536,
// both strategies) take hours of CPU at the issues' full size. KRC_HEAVY_SCALE, a number in
// (0, 1] (default 0.04), is the fraction they run: heavy_sample() keeps every (1/scale)-th
// reference automaton plus symmetric_4 (the deepest counter cascade of the zoo), and
// heavy_scaled(n) scales a word count. KRC_HEAVY_SCALE=1 runs the full tables.
double heavy_scale();
long long heavy_scaled(long long n);
std::vector<std::string> heavy_sample(const std::vector<std::string>& names);

}  // namespace krc::test
