#include "krc/runtime/verifier.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/runtime/network_memory.hpp"
#include "reset_network.hpp"

using namespace krc;

namespace {

// Letters a, b, c reset to s1, s2, s1.
Automaton abc_reset() { return test::reset_automaton({"a", "b", "c"}, {1, 2, 1}, 3); }

// Every word of length `length`, by brute force.
std::vector<std::vector<LetterId>> all_words(int letters, int length) {
  std::vector<std::vector<LetterId>> words;
  std::vector<LetterId> word;
  std::function<void()> extend = [&] {
    if (static_cast<int>(word.size()) == length) {
      words.push_back(word);
      return;
    }
    for (int a = 0; a < letters; ++a) {
      word.push_back(static_cast<LetterId>(a));
      extend();
      word.pop_back();
    }
  };
  extend();
  return words;
}

}  // namespace

// One letter: every length has one word, so the default exhaustive length is max_len, and a
// ceiling it does not fit under cuts it by bisection. CI stop 45 hung here under ASan: the length
// was cut one letter at a time, each step counting 1^length in a loop (2^47 steps at 2^24).
TEST_CASE("verifier: a one-letter network's default exhaustive length is planned at once") {
  Automaton a = test::reset_automaton({"a"}, {1}, 2);
  test::ResetNetworkOptions shape;
  shape.max_len = 1 << 20;
  Network n = test::reset_network(a, shape);
  VerifyOptions options;
  options.random_words = 0;  // the exhaustive part alone
  options.ceiling_seconds = 1e-9;
  VerifyReport r = verify(n, a, options);
  CHECK(r.ok());
  CHECK(r.exhaustive_length == 1);
  CHECK(r.exhaustive_words == 1);
  // Given, the length is kept: the one word of 20,000 letters, right at every position.
  options.exhaustive_length = 20000;
  r = verify(n, a, options);
  CHECK(r.ok());
  CHECK(r.exhaustive_words == 1);
  CHECK(r.positions == 20001);
}

TEST_CASE("verifier: a network computing a reset automaton verifies clean, with the right counts") {
  Automaton a = abc_reset();
  test::ResetNetworkOptions shape;
  shape.max_len = 30;
  Network n = test::reset_network(a, shape);
  VerifyOptions options;
  options.random_words = 37;
  VerifyReport r = verify(n, a, options);
  CHECK(r.ok());
  // 3^10 = 59,049 <= 100,000 < 3^11: the default exhaustive length is 10.
  const auto words = all_words(3, 10);
  CHECK(std::set<std::vector<LetterId>>(words.begin(), words.end()).size() == words.size());
  CHECK(r.exhaustive_length == 10);
  CHECK(r.exhaustive_words == static_cast<long long>(words.size()));
  CHECK(r.random_words == 37);
  CHECK(r.random_length == 30);
  CHECK(r.words == static_cast<long long>(words.size()) + 37);
  CHECK(r.positions == static_cast<long long>(words.size()) * 11 + 37 * 31);
  CHECK(r.wrong_positions == 0);
  CHECK(r.wrong_words == 0);
  CHECK(!r.counterexample);
  CHECK(r.smallest_margin == 1.0);  // logit 1 for the right state, 0 for the others
  const std::string text = format_report(r, a);
  CHECK(text.rfind("verified " + with_thousands(r.positions) + " positions of " +
                       with_thousands(r.words) + " words: all right",
                   0) == 0);
  CHECK(text.find("all 59,049 words of length 10") != std::string::npos);
  CHECK(text.find("all 88,573 words of length <= 10") != std::string::npos);  // (3^11 - 1) / 2
}

TEST_CASE("verifier: the smallest margin and where it is") {
  Automaton a = abc_reset();
  test::ResetNetworkOptions shape;
  shape.weak_letter = 1;  // b's logit is 0.5 instead of 1
  Network n = test::reset_network(a, shape);
  VerifyOptions options;
  options.exhaustive_length = 4;
  VerifyReport r = verify(n, a, options);
  CHECK(r.ok());
  CHECK(r.smallest_margin == 0.5);
  // The first word of length 4 in lexicographic order that has a b: "a a a b" (word 1), at
  // position 4.
  REQUIRE(r.smallest_margin_at);
  CHECK(r.smallest_margin_at->part == VerifyPart::Exhaustive);
  CHECK(r.smallest_margin_at->word == 1);
  CHECK(r.smallest_margin_at->position == 4);
}

TEST_CASE("verifier: a wrong network fails with a correct counterexample and counts") {
  Automaton a = abc_reset();
  test::ResetNetworkOptions shape;
  shape.wrong_letter = 2;  // c should reset to s1; the network says s2
  shape.wrong_state = 2;
  Network n = test::reset_network(a, shape);
  VerifyOptions options;
  options.exhaustive_length = 3;
  options.random_words = 0;
  VerifyReport r = verify(n, a, options);
  CHECK(!r.ok());
  // Brute force: a position is wrong exactly when its letter is c.
  long long wrong_positions = 0, wrong_words = 0;
  for (const auto& w : all_words(3, 3)) {
    long long here = std::count(w.begin(), w.end(), LetterId{2});
    wrong_positions += here;
    wrong_words += here > 0;
  }
  CHECK(r.wrong_positions == wrong_positions);
  CHECK(r.wrong_words == wrong_words);
  REQUIRE(r.counterexample);
  const Counterexample& c = *r.counterexample;
  CHECK(c.word == std::vector<LetterId>{0, 0, 2});  // "a a c", word 2
  CHECK(c.first_error.word == 2);
  CHECK(c.first_error.position == 3);
  CHECK(c.expected == a.run(c.word));
  CHECK(c.actual == std::vector<StateId>{0, 1, 1, 2});
  CHECK(c.wrong == std::vector<char>{0, 0, 0, 1});
  CHECK(r.smallest_margin == -1.0);

  const std::string text = format_report(r, a);
  CHECK(text.rfind("FAILED: " + std::to_string(wrong_positions) + " of 108 positions wrong", 0) ==
        0);
  CHECK(
      text.find("first counterexample: exhaustive word 2 (length 3), first wrong at position 3") !=
      std::string::npos);
  const auto json = report_to_json(r, a);
  CHECK(json["ok"] == false);
  CHECK(json["counterexample"]["word"] == nlohmann::json({"a", "a", "c"}));
  CHECK(json["counterexample"]["actual"] == nlohmann::json({"start", "s1", "s1", "s2"}));
}

TEST_CASE("verifier: a tie between the right state and another counts as an error") {
  Automaton a = abc_reset();
  Network n = test::reset_network(a);
  n.unembedding.coeffRef(3, 2) = 1.0f;  // token c: logit 1 for s1 (right) and for s2
  VerifyOptions options;
  options.exhaustive_length = 1;
  options.random_words = 0;
  VerifyReport r = verify(n, a, options);
  CHECK(r.wrong_positions == 1);  // the word "c", position 1
  CHECK(r.smallest_margin == 0.0);
  REQUIRE(r.counterexample);
  CHECK(r.counterexample->word == std::vector<LetterId>{2});
  CHECK(r.counterexample->actual[1] == 1);  // the argmax is the right state, but tied
  CHECK(r.counterexample->wrong[1] == 1);
  CHECK(format_report(r, a).find("<- wrong (tie)") != std::string::npos);
}

TEST_CASE("verifier: long counterexamples are shown around the first error") {
  Automaton a = abc_reset();
  test::ResetNetworkOptions shape;
  shape.max_len = 200;
  shape.wrong_letter = 2;
  shape.wrong_state = 0;
  Network n = test::reset_network(a, shape);
  VerifyOptions options;
  options.exhaustive_length = 0;
  options.random_words = 3;
  VerifyReport r = verify(n, a, options);
  REQUIRE(r.counterexample);
  const auto& c = *r.counterexample;
  CHECK(c.first_error.part == VerifyPart::Random);
  CHECK(c.first_error.word == 0);
  // The first c in the word is the first error.
  const auto first_c = std::find(c.word.begin(), c.word.end(), LetterId{2}) - c.word.begin();
  CHECK(c.first_error.position == first_c + 1);
  const std::string text = format_report(r, a);
  const auto lines = std::count(text.begin(), text.end(), '\n');
  CHECK(lines < 30);
  CHECK(text.find("...") != std::string::npos);
  CHECK(text.find(std::to_string(c.first_error.position) + "  c ") != std::string::npos);
}

TEST_CASE("verifier: the default exhaustive length") {
  CHECK(default_exhaustive_length(2, 100, 100000) == 16);  // 65,536
  CHECK(default_exhaustive_length(3, 100, 100000) == 10);  // 59,049
  CHECK(default_exhaustive_length(4, 100, 100000) == 8);   // 65,536
  CHECK(default_exhaustive_length(5, 100, 100000) == 7);   // 78,125
  CHECK(default_exhaustive_length(10, 100, 100000) == 5);  // exactly 100,000
  CHECK(default_exhaustive_length(11, 100, 100000) == 4);
  CHECK(default_exhaustive_length(2, 5, 100000) == 5);  // capped by max_len
  CHECK(default_exhaustive_length(1, 9, 100000) == 9);  // one word of every length
  CHECK(default_exhaustive_length(200000, 9, 100000) == 0);
}

TEST_CASE("verifier: lengths beyond max_len and empty runs are refused, progress is reported") {
  Automaton a = abc_reset();
  Network n = test::reset_network(a);  // max_len 12
  VerifyOptions too_long;
  too_long.exhaustive_length = 13;
  CHECK_THROWS_AS(verify(n, a, too_long), std::invalid_argument);
  VerifyOptions too_long_random;
  too_long_random.random_length = 13;
  CHECK_THROWS_AS(verify(n, a, too_long_random), std::invalid_argument);
  VerifyOptions nothing;
  nothing.exhaustive_length = 0;
  nothing.random_words = 0;
  CHECK_THROWS_AS(verify(n, a, nothing), std::invalid_argument);

  VerifyOptions options;
  options.exhaustive_length = 9;
  options.random_words = 10;
  std::vector<VerifyProgress> calls;
  options.progress = [&](const VerifyProgress& p) { calls.push_back(p); };
  VerifyReport r = verify(n, a, options);
  REQUIRE(!calls.empty());
  CHECK(calls.back().words_done == calls.back().words_total);
  CHECK(calls.back().positions_done == r.positions);
  CHECK(calls.back().positions_total == r.positions);
  for (std::size_t i = 1; i < calls.size(); ++i)
    CHECK(calls[i].positions_done > calls[i - 1].positions_done);
}

TEST_CASE("verifier: options reach the report; a one-state automaton has no margin") {
  Automaton one = test::reset_automaton({"a", "b"}, {0, 0}, 1);
  Network n = test::reset_network(one);
  VerifyOptions options;
  options.forward.attention = AttentionKind::Hard;
  options.forward.arithmetic = Arithmetic::Float64;
  options.forward.threads = 1;
  options.seed = 77;
  VerifyReport r = verify(n, one, options);
  CHECK(r.ok());
  CHECK(r.attention == AttentionKind::Hard);
  CHECK(r.arithmetic == Arithmetic::Float64);
  CHECK(r.threads == 1);
  CHECK(r.seed == 77);
  CHECK(!r.smallest_margin_at);
  CHECK(format_report(r, one).find("no margin") != std::string::npos);
}

TEST_CASE("verifier: the default budget keeps 1000 random words, or fewer for large networks") {
  Automaton a = abc_reset();
  Network n = test::reset_network(a);  // tiny: 1000 words fit any budget
  VerifyOptions options;
  options.exhaustive_length = 3;
  VerifyReport r = verify(n, a, options);
  REQUIRE(r.budget);
  CHECK(!r.budget->limited);
  CHECK(r.random_words == kDefaultRandomWords);
  CHECK(format_report(r, a).find("fewer than") == std::string::npos);

  // A budget no word fits into: the minimum, and the report says why and how to get all.
  options.budget_seconds = 1e-9;
  r = verify(n, a, options);
  REQUIRE(r.budget);
  CHECK(r.budget->limited);
  CHECK(r.random_words == kMinRandomWords);
  CHECK(r.words == 27 + kMinRandomWords);
  const std::string text = format_report(r, a);
  CHECK(text.find("fewer than the default 1,000") != std::string::npos);
  CHECK(text.find("--random 1000") != std::string::npos);
  CHECK(report_to_json(r, a)["random"]["budget"]["limited"] == true);

  // A ceiling no word fits under either: one word per thread, and the report says so.
  options.forward.threads = 2;
  options.ceiling_seconds = 1e-9;
  r = verify(n, a, options);
  REQUIRE(r.budget);
  CHECK(r.budget->below_minimum);
  CHECK(r.random_words == 2);
  CHECK(r.words == 27 + 2);
  CHECK(format_report(r, a).find("fewer than the 20 a default run checks at least") !=
        std::string::npos);
  CHECK(report_to_json(r, a)["random"]["budget"]["below_minimum"] == true);
  // Under a ceiling that about 5.5 words fit (no exhaustive part): as many as the plan's own
  // estimate fits, rounded down (the estimate is scaled by a pace measured on the run, so the
  // expected count comes from the report's figure).
  options.exhaustive_length = 0;
  options.ceiling_seconds = 5.5 * r.budget->estimated_cpu_per_word / 2.0;
  r = verify(n, a, options);
  REQUIRE(r.budget);
  const double fit = std::floor(options.ceiling_seconds * 2.0 / r.budget->estimated_cpu_per_word);
  CHECK(r.random_words == static_cast<long long>(std::clamp(fit, 2.0, 20.0)));
  CHECK(r.random_words < 20);
  CHECK(r.budget->below_minimum);
  options.ceiling_seconds = 480.0;
  options.forward.threads = 0;
  options.exhaustive_length = 3;

  // Words given explicitly are checked whatever the budget.
  options.random_words = 300;
  r = verify(n, a, options);
  CHECK(r.random_words == 300);
  CHECK(!r.budget);
  CHECK(report_to_json(r, a)["random"]["budget"].is_null());
}

TEST_CASE("verifier: the size estimate grows with the length and the network") {
  Automaton a = abc_reset();
  test::ResetNetworkOptions shape;
  shape.max_len = 4096;
  const Network n = test::reset_network(a, shape);
  const ForwardPass pass(n);
  CHECK(estimated_cpu_seconds_per_word(pass, 4096) > estimated_cpu_seconds_per_word(pass, 100));
  CHECK(estimated_cpu_seconds_per_word(pass, 100) > 0.0);
  CHECK(estimated_cpu_seconds_per_row(pass) > 0.0);
}

TEST_CASE("verifier: progress estimates the time left, 0 at the end") {
  Automaton a = abc_reset();
  Network n = test::reset_network(a);
  VerifyOptions options;
  options.exhaustive_length = 8;
  options.random_words = 50;
  std::vector<VerifyProgress> calls;
  options.progress = [&](const VerifyProgress& p) { calls.push_back(p); };
  verify(n, a, options);
  REQUIRE(!calls.empty());
  for (const auto& p : calls) CHECK(p.seconds_left >= 0.0);
  CHECK(calls.back().seconds_left == 0.0);
}

namespace {

// The least budget under which `fits` holds (it must hold at 2^40 and the test needs it to
// fail at 1 byte), by bisection.
std::uint64_t least_budget(const std::function<bool()>& fits) {
  std::uint64_t low = 1, high = std::uint64_t{1} << 40;
  while (low + 1 < high) {
    const std::uint64_t mid = low + (high - low) / 2;
    set_memory_budget(mid);
    (fits() ? high : low) = mid;
  }
  return high;
}

}  // namespace

TEST_CASE("verifier: a default run takes fewer threads where the budget holds only their buffers") {
  // The budget that one word's buffers fit and two words' do not: the default run (threads
  // not given) uses one thread and finishes (on a machine of one core it would anyway; on two
  // or more, without the fitting, it takes one per core). The check is the runtime's own
  // (check_forward_memory), so the budgets come from it, by bisection.
  Automaton a = abc_reset();
  Network n = test::reset_network(a);
  const int length = n.max_len;
  const std::uint64_t previous = memory_budget();
  const auto fits = [&](int threads) {
    return [&, threads] {
      try {
        check_forward_memory(n, threads, threads, length,
                             std::max<std::uint64_t>(65536, std::uint64_t(threads) * (length + 1)));
        return true;
      } catch (const LimitError&) {
        return false;
      }
    };
  };
  const std::uint64_t one = least_budget(fits(1)), two = least_budget(fits(2));
  REQUIRE(one < two);
  set_memory_budget(one);
  VerifyOptions options;
  options.exhaustive_length = 2;
  options.random_words = 8;
  VerifyReport r;
  CHECK_NOTHROW(r = verify(n, a, options));
  CHECK(r.ok());
  CHECK(r.threads == 1);
  CHECK(r.words == 9 + 8);
  set_memory_budget(previous);
}

TEST_CASE(
    "verifier: a default run that one word's buffers do not fit is refused before preparing") {
  // Under a budget below the network and its prepared copies, the refusal names the words
  // (what verifying needs), not the preparation that would have come first: a 1,000-state
  // model in bf16 was refused only after 90 s of preparing.
  Automaton a = abc_reset();
  Network n = test::reset_network(a);
  const std::uint64_t previous = memory_budget();
  const NetworkShape shape = shape_of(n);
  set_memory_budget((network_bytes(shape) + prepared_bytes(shape)) / 2);
  std::string refusal;
  try {
    verify(n, a, VerifyOptions{});
  } catch (const LimitError& e) {
    refusal = e.what();
  }
  set_memory_budget(previous);
  CAPTURE(refusal);
  CHECK(refusal.find("running 1 word of up to 12 letters on 1 thread needs about ") !=
        std::string::npos);
}
