#include "krc/runtime/verifier.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <thread>

#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/name_table.hpp"
#include "krc/runtime/network_memory.hpp"

namespace krc {

namespace {
constexpr NameTable<VerifyPart> kVerifyPartNames{"verify part", {"exhaustive", "random"}};
}  // namespace

const char* to_string(VerifyPart part) { return kVerifyPartNames.name(part); }

int default_exhaustive_length(std::size_t letters, int max_len, long long max_words) {
  if (max_words < 1) return 0;
  int length = 0;
  long long count = 1;
  while (length < max_len) {
    if (letters > 1 && count > max_words / static_cast<long long>(letters)) break;
    count *= static_cast<long long>(letters);
    ++length;
  }
  return length;
}

namespace {

using Clock = std::chrono::steady_clock;

// letters^length, or -1 when it does not fit comfortably in a long long.
long long power(std::size_t letters, int length) {
  if (letters <= 1) return letters == 1 || length == 0 ? 1 : 0;  // a one-letter max_len is 2^24
  long long count = 1;
  for (int i = 0; i < length; ++i) {
    if (letters > 1 && count > (1LL << 62) / static_cast<long long>(letters)) return -1;
    count *= static_cast<long long>(letters);
  }
  return count;
}

// Word number `index` of length `length` in lexicographic order (letter 0 first).
std::vector<LetterId> exhaustive_word(long long index, std::size_t letters, int length) {
  std::vector<LetterId> word(length);
  for (int i = length - 1; i >= 0; --i) {
    word[i] = static_cast<LetterId>(index % static_cast<long long>(letters));
    index /= static_cast<long long>(letters);
  }
  return word;
}

class Checker {
 public:
  Checker(const Automaton& automaton, VerifyReport& report)
      : automaton_(automaton), report_(report) {}

  void check(VerifyPart part, long long index, const std::vector<LetterId>& word,
             const Eigen::MatrixXd& logits) {
    const std::vector<StateId> expected = automaton_.run(word);
    const Eigen::Index states = logits.cols();
    bool word_wrong = false;
    for (Eigen::Index t = 0; t < logits.rows(); ++t) {
      const StateId right = expected[t];
      double best_wrong = -std::numeric_limits<double>::infinity();
      for (Eigen::Index s = 0; s < states; ++s)
        if (s != right) best_wrong = std::max(best_wrong, logits(t, s));
      double margin = logits(t, right) - best_wrong;
      if (states == 1)
        margin = std::numeric_limits<double>::infinity();  // nothing to confuse
      else if (std::isnan(margin))
        margin = -std::numeric_limits<double>::infinity();
      if (!(margin > 0)) {  // ties count as errors
        ++report_.wrong_positions;
        word_wrong = true;
      }
      if (states > 1 && (!report_.smallest_margin_at || margin < report_.smallest_margin)) {
        report_.smallest_margin = margin;
        report_.smallest_margin_at = WordPosition{part, index, t};
      }
    }
    ++report_.words;
    report_.positions += logits.rows();
    if (!word_wrong) return;
    ++report_.wrong_words;
    if (report_.counterexample) return;
    Counterexample c;
    c.word = word;
    c.expected = expected;
    for (Eigen::Index t = 0; t < logits.rows(); ++t) {
      Eigen::Index best = 0;
      for (Eigen::Index s = 1; s < states; ++s)
        if (logits(t, s) > logits(t, best)) best = s;
      const double right = logits(t, expected[t]);
      bool wrong = false;  // some other state's logit is not below the right one
      for (Eigen::Index s = 0; s < states; ++s)
        if (s != expected[t] && !(right > logits(t, s))) wrong = true;
      c.actual.push_back(static_cast<StateId>(best));
      c.wrong.push_back(wrong);
    }
    const auto first = std::find(c.wrong.begin(), c.wrong.end(), 1) - c.wrong.begin();
    c.first_error = WordPosition{part, index, static_cast<long long>(first)};
    report_.counterexample = std::move(c);
  }

 private:
  const Automaton& automaton_;
  VerifyReport& report_;
};

// No letters: the empty word is the only word there is (exhaustive length 0, one word, one
// position); random words of length > 0 do not exist, so asking for some is refused.
void plan_empty_alphabet(const VerifyOptions& options, VerifyReport& report) {
  if (options.exhaustive_length.value_or(0) > 0)
    throw std::invalid_argument(empty_alphabet_clause() + " (exhaustive length 0 only)");
  if (options.random_words.value_or(0) > 0 || options.random_length.value_or(0) > 0)
    throw std::invalid_argument(empty_alphabet_clause() + ", so there are no random words");
  report.exhaustive_length = 0;
  report.exhaustive_words = 1;
  report.random_words = 0;
  report.random_length = 0;
  report.seed = options.seed;
}

// How much slower than the size model this network runs here, measured on one word of at
// most 16 letters, and never below 1 (the estimates err towards more time). The model counts a
// share of the nonzero weights as active, but binary coordinates' bits are all nonzero: a
// 127-state protocol model compiled for bf16, verified in float32, ran its exhaustive part
// 2.7 times slower than estimated, 13 minutes of a default run.
double measured_slowdown(const ForwardPass& pass, int max_len, std::size_t letters) {
  std::vector<LetterId> word(static_cast<std::size_t>(std::min(max_len, 16)));
  for (std::size_t i = 0; i < word.size(); ++i) word[i] = static_cast<LetterId>(i % letters);
  const auto start = Clock::now();
  pass.run(word);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // Below 10 ms the pass's fixed costs (buffers, threads) dominate: a one-state network ran
  // 16 letters thousands of times slower than its size model under AddressSanitizer, and the
  // default plan then cut a one-letter exhaustive length of 2^24 one letter at a time.
  if (seconds < 0.01) return 1.0;
  return std::max(1.0,
                  seconds / estimated_cpu_seconds_per_word(pass, static_cast<int>(word.size())));
}

// The longest length up to `length` (at least 1) whose cost is within the limit; the cost grows
// with the length, so a bisection finds it (a one-letter network's default length is max_len).
template <typename Cost>
int longest_within(int length, double limit, const Cost& cost) {
  if (length <= 1 || cost(length) <= limit) return length;
  int fits = 1, over = length;
  while (over - fits > 1) {
    const int middle = fits + (over - fits) / 2;
    (cost(middle) > limit ? over : fits) = middle;
  }
  return fits;
}

// The report's plan: what to check, from the options and the network (the default budget
// decides the random words when the options leave them open).
void plan(const ForwardPass& pass, std::size_t letters, const VerifyOptions& options,
          VerifyReport& report) {
  const Network& network = pass.network();
  report.attention = options.forward.attention;
  report.arithmetic = options.forward.arithmetic;
  report.threads = options.forward.threads > 0
                       ? options.forward.threads
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (letters == 0) return plan_empty_alphabet(options, report);
  report.exhaustive_length = options.exhaustive_length.value_or(
      default_exhaustive_length(letters, network.max_len, options.max_exhaustive_words));
  report.random_length = options.random_length.value_or(network.max_len);
  report.seed = options.seed;
  if (report.exhaustive_length < 0 || report.exhaustive_length > network.max_len)
    throw std::invalid_argument("exhaustive length " + std::to_string(report.exhaustive_length) +
                                " is outside [0, max_len " + std::to_string(network.max_len) + "]");
  if (report.random_length < 0 || report.random_length > network.max_len)
    throw std::invalid_argument("random word length " + std::to_string(report.random_length) +
                                " is outside [0, max_len " + std::to_string(network.max_len) + "]");
  // Exhaustive words in lexicographic order reuse their predecessor's rows: about
  // letters / (letters - 1) new rows each; bf16 and fp16 run every row of every word.
  const Arithmetic arithmetic = options.forward.arithmetic;
  const bool narrow = arithmetic == Arithmetic::BFloat16 || arithmetic == Arithmetic::Float16;
  const bool by_default = !options.exhaustive_length || !options.random_words;
  const double slowdown = by_default ? measured_slowdown(pass, network.max_len, letters) : 1.0;
  const double per_row = estimated_cpu_seconds_per_row(pass) * slowdown;
  auto exhaustive_cost = [&](int length) {
    const double new_rows =
        narrow || letters < 2 ? length + 1.0 : static_cast<double>(letters) / (letters - 1.0);
    return static_cast<double>(power(letters, length)) * new_rows * per_row;
  };
  // In bf16 and fp16 the default length is also kept to half the time budget: 100,000 short
  // words of a large network (a 55-state protocol model: milliseconds a row, every row run)
  // would take many minutes. The other arithmetics reuse rows and are kept to half the
  // ceiling (a 127-state model in float32 took 13 minutes over 28,561 words of length 4).
  const double exhaustive_limit =
      0.5 * (narrow ? options.budget_seconds : options.ceiling_seconds) * report.threads;
  if (!options.exhaustive_length)
    report.exhaustive_length =
        longest_within(report.exhaustive_length, exhaustive_limit, exhaustive_cost);
  report.exhaustive_words =
      report.exhaustive_length > 0 ? power(letters, report.exhaustive_length) : 0;
  if (report.exhaustive_words < 0)
    throw std::invalid_argument("too many words of length " +
                                std::to_string(report.exhaustive_length) + " to enumerate");
  if (options.random_words) {
    report.random_words = *options.random_words;
  } else {
    const double exhaustive =
        report.exhaustive_length > 0 ? exhaustive_cost(report.exhaustive_length) : 0.0;
    VerifyReport::Budget budget;
    budget.seconds = options.budget_seconds;
    budget.ceiling_seconds = std::max(options.ceiling_seconds, options.budget_seconds);
    budget.estimated_cpu_per_word =
        estimated_cpu_seconds_per_word(pass, report.random_length) * slowdown;
    const double per_word = std::max(budget.estimated_cpu_per_word, 1e-12);
    const double fit =
        std::floor((options.budget_seconds * report.threads - exhaustive) / per_word);
    // The floor: kMinRandomWords, or what fits under the ceiling (one word per thread at least).
    const double least =
        std::clamp(std::floor((budget.ceiling_seconds * report.threads - exhaustive) / per_word),
                   static_cast<double>(std::min<long long>(report.threads, kMinRandomWords)),
                   static_cast<double>(kMinRandomWords));
    report.random_words =
        static_cast<long long>(std::clamp(fit, least, static_cast<double>(kDefaultRandomWords)));
    budget.limited = report.random_words < kDefaultRandomWords;
    budget.below_minimum = report.random_words < kMinRandomWords;
    budget.estimated_seconds_total =
        (exhaustive + report.random_words * budget.estimated_cpu_per_word) / report.threads;
    report.budget = budget;
  }
  if (report.random_words < 0)
    throw std::invalid_argument("the number of random words is negative");
  if (report.exhaustive_words == 0 && report.random_words == 0)
    throw std::invalid_argument("nothing to verify: no exhaustive length and no random words");
}

// The wall time left: the part under way at its measured pace; random words not yet started
// at the size estimate.
double seconds_left(const VerifyReport& report, double random_cpu_per_word, double part_seconds,
                    long long part_done, long long part_total, VerifyPart part) {
  if (part_done <= 0) return -1.0;
  double left = part_seconds / part_done * (part_total - part_done);
  if (part == VerifyPart::Exhaustive)
    left += report.random_words * random_cpu_per_word / report.threads;
  return left;
}

// The default budget re-planned from the measured pace: the size estimate can be low (a
// network whose weights are all active, like the integer scan form's compose units), so after
// each batch of random words the words left are cut to what fits the budget's wall time at the
// pace measured so far (never below kMinRandomWords unless they would pass the ceiling, never
// more than planned). The words checked stay the first K of the seeded sequence.
long long keep_to_budget(VerifyReport& report, VerifyReport::Budget& budget, double seconds,
                         double part_seconds, long long done) {
  if (done <= 0 || part_seconds <= 0) return report.random_words;
  const double per_word = part_seconds / static_cast<double>(done);  // wall, threads together
  const auto more_within = [&](double end) {
    return done + static_cast<long long>(std::floor(std::max(0.0, end - seconds) / per_word));
  };
  const long long least = std::min(kMinRandomWords, more_within(budget.ceiling_seconds));
  const long long fit = std::max(least, more_within(budget.seconds));
  if (fit >= report.random_words) return report.random_words;
  report.random_words = std::max(fit, done);
  budget.estimated_cpu_per_word =
      std::max(budget.estimated_cpu_per_word, per_word * report.threads);
  budget.estimated_seconds_total = seconds + per_word * (report.random_words - done);
  budget.limited = report.random_words < kDefaultRandomWords;
  budget.below_minimum = report.random_words < kMinRandomWords;
  return report.random_words;
}

// The verification's bookkeeping, apart from its checks: the clock, the time budget (random
// words cut to what fits at the pace measured so far) and progress reports.
class Bookkeeping {
 public:
  Bookkeeping(const ForwardPass& pass, const VerifyOptions& options, VerifyReport& report,
              Clock::time_point start)
      : options_(options), report_(report), start_(start) {
    progress_.words_total = report.exhaustive_words + report.random_words;
    progress_.positions_total = report.exhaustive_words * (report.exhaustive_length + 1) +
                                report.random_words * (report.random_length + 1);
    random_cpu_per_word_ = !options.progress ? 0.0
                           : report.budget
                               ? report.budget->estimated_cpu_per_word
                               : estimated_cpu_seconds_per_word(pass, report.random_length);
  }

  double seconds() const { return since(start_); }
  void start_part() { part_start_ = Clock::now(); }

  // After a batch: `done` of the part's `count` words are checked. Under the default budget the
  // random words left may be cut (count with them); progress is reported.
  void batch_done(VerifyPart part, long long done, long long& count) {
    if (part == VerifyPart::Random && report_.budget) {
      count = keep_to_budget(report_, *report_.budget, seconds(), since(part_start_), done);
      progress_.words_total = report_.exhaustive_words + count;
      progress_.positions_total = report_.exhaustive_words * (report_.exhaustive_length + 1) +
                                  count * (report_.random_length + 1);
    }
    if (!options_.progress) return;
    progress_.words_done = report_.words;
    progress_.positions_done = report_.positions;
    progress_.seconds = seconds();
    progress_.seconds_left =
        seconds_left(report_, random_cpu_per_word_, since(part_start_), done, count, part);
    options_.progress(progress_);
  }

 private:
  static double since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }

  const VerifyOptions& options_;
  VerifyReport& report_;
  const Clock::time_point start_;
  Clock::time_point part_start_ = Clock::now();
  VerifyProgress progress_;
  double random_cpu_per_word_ = 0.0;
};

// Checks `count` words of one part, make_word(i) for i in [0, count), in batches of about 64K
// positions (at least one word per thread), so that threads stay busy and progress comes often;
// fewer where the words are slow (about two seconds of work a batch by the estimate: a 127-state
// model in bf16 takes a minute a word at length 1024, and the budget is re-planned, Ctrl-C
// seen and progress shown only between batches).
template <typename MakeWord>
void run_part(const ForwardPass& pass, Checker& checker, Bookkeeping& books, VerifyPart part,
              long long& count, int length, int threads, MakeWord make_word) {
  books.start_part();
  const double per_word = estimated_cpu_seconds_per_word(pass, length);
  const double in_two_seconds = threads * 2.0 / std::max(per_word, 1e-9);
  const long long per_batch = std::max<long long>(
      threads, std::min<double>(65536 / (length + 1), std::floor(in_two_seconds)));
  for (long long first = 0; first < count; first += per_batch) {
    const long long last = std::min(count, first + per_batch);
    std::vector<std::vector<LetterId>> words;
    for (long long i = first; i < last; ++i) words.push_back(make_word(i));
    const auto logits = pass.run(words);
    for (long long i = first; i < last; ++i)
      checker.check(part, i, words[i - first], logits[i - first]);
    books.batch_done(part, last, count);
  }
}

int longest_word(const Network& network, const VerifyOptions& options) {
  return std::max(options.random_length.value_or(network.max_len),
                  options.exhaustive_length.value_or(0));
}

// Where one random word does not fit beside the network even with no prepared copies, the
// refusal comes before they are built (a 1,000-state model in bf16 was once refused 90 s
// later, after preparing). Not where no random word is asked for: the exhaustive words may be
// short.
void refuse_early(const Network& network, const VerifyOptions& options) {
  if (options.forward.threads > 1 || options.random_words.value_or(1) == 0) return;
  const int longest = longest_word(network, options);
  check_forward_memory(network, 1, 1, longest, static_cast<std::uint64_t>(longest) + 1, 0);
}

// The threads a default run uses (--threads not given): one per core, fewer where the buffers
// of that many words at once would pass the memory budget, counted beside the prepared copies'
// real size. A random 657-state automaton compiled for bf16 at 1024 needed 12.2 GiB for 2
// words against an 11.8 GiB budget, and the default run refused after 166 s; one thread fits.
// The exhaustive part's batches hold up to 65,536 rows of logits, counted too.
VerifyOptions with_fitting_threads(const ForwardPass& pass, const VerifyOptions& options) {
  VerifyOptions fitted = options;
  if (options.forward.threads > 0) return fitted;
  const Network& network = pass.network();
  const int longest = longest_word(network, options);
  const auto rows = [&](int threads) {
    return std::max<std::uint64_t>(65536, static_cast<std::uint64_t>(threads) * (longest + 1));
  };
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (; threads > 1; --threads) try {
      check_forward_memory(network, threads, threads, longest, rows(threads),
                           pass.prepared_bytes());
      break;
    } catch (const LimitError&) {
    }
  if (threads == 1 && options.random_words.value_or(1) > 0)
    check_forward_memory(network, 1, 1, longest, static_cast<std::uint64_t>(longest) + 1,
                         pass.prepared_bytes());
  fitted.forward.threads = threads;
  return fitted;
}

void check_sizes(const Network& network, const Automaton& automaton) {
  const std::size_t letters = automaton.letter_count();
  if (letters + 1 != network.vocabulary.size())
    throw std::invalid_argument("the automaton has " + std::to_string(letters) +
                                " letters, the network " +
                                std::to_string(network.vocabulary.size() - 1));
  if (automaton.state_count() != network.states.size())
    throw std::invalid_argument("the automaton has " + std::to_string(automaton.state_count()) +
                                " states, the network " + std::to_string(network.states.size()));
}

}  // namespace

// 1. the sizes agree; 2. the plan; 3. the exhaustive words; 4. the random words.
VerifyReport verify(const Network& network, const Automaton& automaton,
                    const VerifyOptions& requested) {
  const auto start = Clock::now();       // the report's seconds include preparing the network
  const MemoryPhase phase("verifying");  // named in a refusal of the forward pass's memory
  check_sizes(network, automaton);
  refuse_early(network, requested);
  ForwardPass pass(network, requested.forward);
  const VerifyOptions options = with_fitting_threads(pass, requested);
  pass.set_threads(options.forward.threads);
  const std::size_t letters = automaton.letter_count();
  VerifyReport report;
  plan(pass, letters, options, report);
  Checker checker(automaton, report);
  Bookkeeping books(pass, options, report, start);
  run_part(pass, checker, books, VerifyPart::Exhaustive, report.exhaustive_words,
           report.exhaustive_length, report.threads,
           [&](long long i) { return exhaustive_word(i, letters, report.exhaustive_length); });
  std::mt19937_64 rng(options.seed);
  // No letters: no random words were planned, and the range stays well formed.
  std::uniform_int_distribution<LetterId> letter(
      0, static_cast<LetterId>(std::max<std::size_t>(letters, 1) - 1));
  run_part(pass, checker, books, VerifyPart::Random, report.random_words, report.random_length,
           report.threads, [&](long long) {
             std::vector<LetterId> word(report.random_length);
             for (auto& a : word) a = letter(rng);
             return word;
           });
  report.seconds = books.seconds();
  return report;
}

}  // namespace krc
