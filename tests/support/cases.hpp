#pragma once
// One table of end-to-end cases (ggml's tests/test-backend-ops.cpp `make_test_cases_eval()` is
// the model): each Case names an automaton (a reference automaton or a draw of random ones), the
// strategy and max-len it is compiled at, and how the network is checked (arithmetic, attention,
// words, framework). tests/backend/end_to_end_test.cpp generates one test per shard of
// end_to_end_cases(); the shards, their names and the CompileOptions come from the fields here,
// so adding a row adds a test.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/backend/compile.hpp"
#include "krc/backend/precision.hpp"
#include "krc/runtime/forward.hpp"

namespace krc::test {

// max_len: the largest max-len the onelayer plan reports for the automaton.
inline constexpr int kLargestLen = 0;
// Words::exhaustive: the longest length whose words fit the onelayer check's word budget.
inline constexpr int kAffordable = -1;

// Who compiles and runs the network: the libraries and krc's verifier, the libraries and numpy's
// float32 pass (tools/reference_forward.py --float32), or the krc command (`krc compile` of the
// reference file, `krc verify --json`).
enum class Framework { Krc, Numpy, Command };

// Which of a group's reference automata run: all of them, test::scaled_sample's at
// KRC_TEST_SCALE, or test::heavy_sample's at KRC_HEAVY_SCALE.
enum class Sample { All, Scaled, Heavy };

// What scales a count of random words: KRC_TEST_SCALE, KRC_HEAVY_SCALE, or nothing.
enum class Scale { Test, Heavy, None };

// `count` random automata (scaled by KRC_TEST_SCALE) drawn from mt19937_64(seed) with
// min_states..max_states states and up to max_letters letters. solvable_only keeps the solvable
// ones among them, drawing on up to the full count until one is.
struct RandomDraw {
  std::uint64_t seed = 0;
  int count = 0;
  int max_states = 0;
  int max_letters = 0;
  int min_states = 1;
  bool solvable_only = false;
};

// Every word of length `exhaustive` (hence every shorter one, as prefixes) and `random` words
// (scaled by KRC_TEST_SCALE) of length `length` (0: the max-len), drawn from `seed`.
struct Words {
  int exhaustive = 0;
  long long random = 0;
  int length = 0;
  std::uint64_t seed = 0;
  Scale scale = Scale::Test;
};

// A count of random words as `words.scale` says.
long long scaled_words(const Words& words);

// What a row checks in the sanitized build (tools/test.sh --lane and --sanitize), which runs
// 20-50x slower: at most `automata` of its automata (a group's reference automata evenly spread,
// the first included; a random draw's first ones) and at most `words` random words a network.
// The sanitizer looks for memory errors on the paths a row's compilation and checks take, and a
// few automata reach them; the row's statistics (every automaton, hundreds of words) are the
// Release suite's. The sample is the table's, whatever KRC_TEST_SCALE says, so that no check
// meets a sample smaller than it was written for.
struct Sanitized {
  int automata = 2;
  long long words = 8;
};

struct Case {
  std::string automaton{};             // a reference automaton, when `random` is empty
  std::string folder = "automata";     // its folder in tests/reference (random/automata: SgpDec's)
  std::string among{};                 // which reference automata its group covers, in words
  std::optional<RandomDraw> random{};  // else a draw of random automata
  Strategy strategy = Strategy::Scan;
  int max_len = 0;       // or kLargestLen
  int counting_cap = 0;  // with kLargestLen: at most this for a counting code (0: no cap)
  Precision precision = Precision::Float32;  // the format the network is compiled for
  Arithmetic arithmetic = Arithmetic::Float32;
  AttentionKind attention = AttentionKind::Softmax;
  Framework framework = Framework::Krc;
  Words words{};
  std::optional<bool> solvable{};  // what the decomposition must say, where the case claims it
  // Reference automata of one group split into `shards` tests, this case in shard `shard`.
  int shard = 0, shards = 1;
  Sample sample = Sample::All;
  Sanitized sanitized{};

  std::string name() const;        // every field
  std::string group_name() const;  // every field but the reference automaton's name
};

// The options every end-to-end case is compiled with (the one place they are made), at
// `max_len` (the case's, or what kLargestLen came to for the automaton).
CompileOptions compile_options(const Case& c, int max_len);

// The end-to-end tests of the backend's test program (tests/backend/end_to_end_test.cpp).
std::vector<Case> end_to_end_cases();
// The heavy ones (ctest label "heavy", tests/heavy/heavy_test.cpp): hours of CPU at
// KRC_HEAVY_SCALE 1.
std::vector<Case> heavy_cases();

// The cases of one generated test: those with the same group_name, in table order.
struct Shard {
  std::string name;
  std::vector<Case> cases;
};
std::vector<Shard> shards_of(const std::vector<Case>& cases);

}  // namespace krc::test
