#pragma once
// Proves a network right by running it: at every position of every tested word the argmax
// of the logits (ties count as errors) must be the automaton's state after that prefix
// (position 0: the initial state). Tested words: all words of one length L (by causality
// their prefixes cover every shorter word) and seeded random words of length N.
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

struct VerifyProgress {
  long long words_done = 0, words_total = 0;
  long long positions_done = 0, positions_total = 0;
  double seconds = 0;
  double seconds_left = -1;  // estimated wall time to the end; < 0 while unknown
};

// The random words of a default run: 1000, or fewer when the network is so large that they
// would take longer than the time budget, but at least 20 (README "Verifying and running"),
// unless even those 20 would pass the ceiling (VerifyOptions::ceiling_seconds).
inline constexpr long long kDefaultRandomWords = 1000, kMinRandomWords = 20;

struct VerifyOptions {
  // Length of the exhaustive part; nullopt: the longest length with at most
  // max_exhaustive_words words (and at most max_len); 0 disables it.
  std::optional<int> exhaustive_length;
  long long max_exhaustive_words = 100000;
  // nullopt: the default budget, kDefaultRandomWords or as many (at least kMinRandomWords) as
  // fit into budget_seconds of wall time with the exhaustive part, by the size estimate below.
  std::optional<long long> random_words;
  double budget_seconds = 50.0;  // of estimated forward passes: about a minute with loading
  // The default run's hard end: the floor of kMinRandomWords gives way where those words would
  // take longer (a 127-state protocol model in bf16 takes about a minute a word at length
  // 1024: 20 words were 11 minutes on 2 cores), down to one word per thread, so that a default
  // run ends within about ten minutes with loading. The report says so.
  double ceiling_seconds = 480.0;
  std::optional<int> random_length;  // default: max_len
  std::uint64_t seed = 1;
  ForwardOptions forward;
  // Called after every batch of words, from the calling thread.
  std::function<void(const VerifyProgress&)> progress;
};

enum class VerifyPart { Exhaustive, Random };
const char* to_string(VerifyPart part);

// Where in the tested words: part, index of the word in that part, position (0 = BOS).
struct WordPosition {
  VerifyPart part = VerifyPart::Exhaustive;
  long long word = 0;
  long long position = 0;
};

struct Counterexample {
  WordPosition first_error;  // the first wrong position of the first wrong word
  std::vector<LetterId> word;
  std::vector<StateId> expected;  // the automaton's states, word.size() + 1
  std::vector<StateId> actual;    // the argmax of the logits (lowest index on ties)
  std::vector<char> wrong;        // per position: argmax not the expected state, or tied
};

struct VerifyReport {
  AttentionKind attention = AttentionKind::Softmax;
  Arithmetic arithmetic = kDefaultArithmetic;
  int threads = 0;

  int exhaustive_length = 0;       // 0: no exhaustive part
  long long exhaustive_words = 0;  // letters^L
  long long random_words = 0;
  int random_length = 0;
  // The default budget at work (random_words left to it): the estimate it used, and whether
  // it cut the random words below kDefaultRandomWords.
  struct Budget {
    double seconds = 0;                  // the budget
    double estimated_seconds_total = 0;  // wall time estimated for the whole run
    double estimated_cpu_per_word = 0;   // CPU seconds per random word
    double ceiling_seconds = 0;          // the run's hard end (VerifyOptions::ceiling_seconds)
    bool limited = false;
    // Fewer than kMinRandomWords: even those would have passed the ceiling.
    bool below_minimum = false;
  };
  std::optional<Budget> budget;
  std::uint64_t seed = 0;

  long long words = 0, positions = 0;  // checked
  long long wrong_positions = 0, wrong_words = 0;
  std::optional<Counterexample> counterexample;

  // Smallest (right logit - best wrong logit) over all positions; +inf with one state.
  double smallest_margin = std::numeric_limits<double>::infinity();
  std::optional<WordPosition> smallest_margin_at;
  double seconds = 0;

  bool ok() const { return wrong_positions == 0; }
};

// The default exhaustive length: the longest L <= max_len with letters^L <= max_words.
int default_exhaustive_length(std::size_t letters, int max_len, long long max_words);

// CPU seconds of a forward pass on one word of `length` letters, and on one more row of a
// short word (exhaustive words reuse their predecessor's rows), estimated from the prepared
// network's sizes (verify_budget.cpp says how). Errs towards more, not less.
double estimated_cpu_seconds_per_word(const ForwardPass& pass, int length);
double estimated_cpu_seconds_per_row(const ForwardPass& pass);

// Throws std::invalid_argument when the automaton does not fit the network (letters,
// states), a requested length exceeds max_len, or there is nothing to check.
VerifyReport verify(const Network& network, const Automaton& automaton,
                    const VerifyOptions& options = {});

// "verified 1,100,000 positions of 61,049 words: all right; smallest margin ..." and, on a
// mismatch, the first counterexample (long words shown around the first error).
std::string format_report(const VerifyReport& report, const Automaton& automaton);
nlohmann::json report_to_json(const VerifyReport& report, const Automaton& automaton);

// The progress line of krc verify and Network.verify: "verifying: 42% (1,000 of 2,000 words),
// 12 s, about 17 s left". The percentage is the share of time once the estimate is known
// (exhaustive words cost far less than random ones), of positions before.
std::string progress_line(const VerifyProgress& p);

}  // namespace krc
