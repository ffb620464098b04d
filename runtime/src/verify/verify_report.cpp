// The verification report for people (text) and programs (JSON).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "krc/automata/automaton.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/runtime/verifier.hpp"

namespace krc {

std::string progress_line(const VerifyProgress& p) {
  const double percent = p.seconds_left >= 0     ? 100.0 * p.seconds / (p.seconds + p.seconds_left)
                         : p.positions_total > 0 ? 100.0 * p.positions_done / p.positions_total
                                                 : 100.0;
  std::string line = "verifying: " + std::to_string(static_cast<int>(percent)) + "% (" +
                     with_thousands(p.words_done) + " of " + with_thousands(p.words_total) +
                     " words), " + std::to_string(static_cast<int>(p.seconds)) + " s";
  if (p.seconds_left >= 0)
    line +=
        ", about " + std::to_string(static_cast<long long>(std::ceil(p.seconds_left))) + " s left";
  return line;
}

namespace {

std::string number(double x) {
  if (std::isinf(x)) return x > 0 ? "infinite" : "-infinite";
  std::ostringstream s;
  s << std::setprecision(4) << x;
  return s.str();
}

// All words of length <= L, which the prefixes of the words of length L run through.
long long covered_words(std::size_t letters, int length) {
  long long total = 0, power = 1;
  for (int i = 0; i <= length; ++i) {
    total += power;
    if (i < length) power *= static_cast<long long>(letters);
  }
  return total;
}

std::string place(const WordPosition& p) {
  return std::string(to_string(p.part)) + " word " + with_thousands(p.word) + ", position " +
         with_thousands(p.position);
}

std::string letter_at(const Counterexample& c, const Automaton& a, std::size_t t) {
  return t == 0 ? "<bos>" : a.letter_name(c.word[t - 1]);
}

void write_counterexample(std::ostream& out, const Counterexample& c, const Automaton& a) {
  const std::size_t positions = c.expected.size();
  const std::size_t first = static_cast<std::size_t>(c.first_error.position);
  out << "first counterexample: " << to_string(c.first_error.part) << " word "
      << with_thousands(c.first_error.word) << " (length " << with_thousands(c.word.size())
      << "), first wrong at position " << with_thousands(c.first_error.position) << "\n";
  // Long words: a window around the first error.
  std::size_t from = 0, to = positions;
  if (positions > 24) {
    from = first > 8 ? first - 8 : 0;
    to = std::min(positions, first + 9);
  }
  std::size_t wl = 6, we = 8;
  for (std::size_t t = from; t < to; ++t) {
    wl = std::max(wl, letter_at(c, a, t).size());
    we = std::max(we, a.state_name(c.expected[t]).size());
  }
  out << "  " << std::setw(9) << "position"
      << "  " << std::left << std::setw(static_cast<int>(wl)) << "letter"
      << "  " << std::setw(static_cast<int>(we)) << "expected"
      << "  actual\n"
      << std::right;
  if (from > 0)
    out << "  " << std::setw(9) << "..."
        << "\n";
  for (std::size_t t = from; t < to; ++t) {
    out << "  " << std::setw(9) << t << "  " << std::left << std::setw(static_cast<int>(wl))
        << letter_at(c, a, t) << "  " << std::setw(static_cast<int>(we))
        << a.state_name(c.expected[t]) << "  " << a.state_name(c.actual[t]) << std::right;
    if (c.wrong[t]) out << (c.actual[t] == c.expected[t] ? "   <- wrong (tie)" : "   <- wrong");
    out << "\n";
  }
  if (to < positions)
    out << "  " << std::setw(9) << "..."
        << "\n";
}

}  // namespace

std::string format_report(const VerifyReport& r, const Automaton& a) {
  std::ostringstream out;
  if (r.ok()) {
    out << "verified " << with_thousands(r.positions) << " positions of " << with_thousands(r.words)
        << " words: all right";
  } else {
    out << "FAILED: " << with_thousands(r.wrong_positions) << " of " << with_thousands(r.positions)
        << " positions wrong, in " << with_thousands(r.wrong_words) << " of "
        << with_thousands(r.words) << " words";
  }
  if (r.smallest_margin_at)
    out << "; smallest margin " << number(r.smallest_margin) << " at "
        << place(*r.smallest_margin_at);
  else if (r.words > 0)
    out << "; one state only, no margin to measure";
  out << "\n";
  if (a.letter_count() == 0)
    out << "  exhaustive: the empty word (" << empty_alphabet_clause() << ")\n";
  else if (r.exhaustive_length > 0)
    out << "  exhaustive: all " << with_thousands(r.exhaustive_words) << " words of length "
        << r.exhaustive_length << " (their prefixes: all "
        << with_thousands(covered_words(a.letter_count(), r.exhaustive_length))
        << " words of length <= " << r.exhaustive_length << ")\n";
  else
    out << "  exhaustive: none\n";
  if (a.letter_count() == 0)
    out << "  random: none (no word of length > 0 exists over an empty alphabet)\n";
  else
    out << "  random: " << with_thousands(r.random_words)
        << (r.random_words == 1 ? " word of length " : " words of length ")
        << with_thousands(r.random_length) << ", seed " << r.seed << "\n";
  if (r.budget && r.budget->below_minimum)
    out << "    fewer than the " << kMinRandomWords << " a default run checks at least: each word "
        << "takes about " << number(r.budget->estimated_cpu_per_word)
        << " s of CPU, and the default run ends within about " << number(r.budget->ceiling_seconds)
        << " s on " << r.threads << (r.threads == 1 ? " thread" : " threads") << "; --random "
        << kMinRandomWords << " (or more) checks more\n";
  else if (r.budget && r.budget->limited)
    out << "    fewer than the default " << with_thousands(kDefaultRandomWords)
        << ": the network is large (an estimated " << number(r.budget->estimated_cpu_per_word)
        << " s of CPU per word), and the default run keeps to about " << number(r.budget->seconds)
        << " s on " << r.threads << (r.threads == 1 ? " thread" : " threads") << "; --random "
        << kDefaultRandomWords << " checks them all\n";
  out << "  attention " << to_string(r.attention) << ", arithmetic " << to_string(r.arithmetic)
      << " (" << describe(r.arithmetic) << "), " << r.threads
      << (r.threads == 1 ? " thread, " : " threads, ") << std::fixed << std::setprecision(2)
      << r.seconds << " s\n";
  if (r.counterexample) write_counterexample(out, *r.counterexample, a);
  return out.str();
}

nlohmann::json report_to_json(const VerifyReport& r, const Automaton& a) {
  using nlohmann::json;
  auto position = [](const WordPosition& p) {
    return json{{"part", to_string(p.part)}, {"word", p.word}, {"position", p.position}};
  };
  json out = {
      {"ok", r.ok()},
      {"words", r.words},
      {"positions", r.positions},
      {"wrong_positions", r.wrong_positions},
      {"wrong_words", r.wrong_words},
      {"exhaustive",
       {{"length", r.exhaustive_length},
        {"words", r.exhaustive_words},
        {"covered_words",
         r.exhaustive_words > 0 ? covered_words(a.letter_count(), r.exhaustive_length) : 0}}},
      {"random",
       {{"words", r.random_words},
        {"length", r.random_length},
        {"seed", r.seed},
        {"budget", r.budget
                       ? json{{"seconds", r.budget->seconds},
                              {"estimated_seconds", r.budget->estimated_seconds_total},
                              {"estimated_cpu_seconds_per_word", r.budget->estimated_cpu_per_word},
                              {"default_words", kDefaultRandomWords},
                              {"ceiling_seconds", r.budget->ceiling_seconds},
                              {"minimum_words", kMinRandomWords},
                              {"limited", r.budget->limited},
                              {"below_minimum", r.budget->below_minimum}}
                       : json(nullptr)}}},
      {"smallest_margin",
       std::isfinite(r.smallest_margin) ? json(r.smallest_margin) : json(nullptr)},
      {"smallest_margin_at",
       r.smallest_margin_at ? position(*r.smallest_margin_at) : json(nullptr)},
      {"attention", to_string(r.attention)},
      {"arithmetic", to_string(r.arithmetic)},
      {"threads", r.threads},
      {"seconds", r.seconds},
      {"counterexample", nullptr},
  };
  if (r.counterexample) {
    const Counterexample& c = *r.counterexample;
    json word = json::array(), expected = json::array(), actual = json::array(),
         wrong = json::array();
    for (LetterId l : c.word) word.push_back(a.letter_name(l));
    for (std::size_t t = 0; t < c.expected.size(); ++t) {
      expected.push_back(a.state_name(c.expected[t]));
      actual.push_back(a.state_name(c.actual[t]));
      if (c.wrong[t]) wrong.push_back(t);
    }
    out["counterexample"] = {{"first_error", position(c.first_error)},
                             {"word", word},
                             {"expected", expected},
                             {"actual", actual},
                             {"wrong_positions", wrong}};
  }
  return out;
}

}  // namespace krc
