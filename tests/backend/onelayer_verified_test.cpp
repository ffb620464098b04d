// onelayer networks verified at the largest max-len their plan reports: krc's verifier (every
// word of that length, float32 softmax), numpy's float32 forward pass (tools/reference_forward.py
// --float32, every word of that length or 256 of them), and the float32 error bound the plan relies
// on, against a float32 softmax written here. Counting codes reach max-lens where not every word
// can be run: there the words 1^m 0^(L-m) cover every (length, count) pair, which is all the value
// depends on (up to the order of float32 sums, which the bound covers), and random words cover
// orders.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "krc/automaton_json.hpp"
#include "krc/compile.hpp"
#include "krc/forward.hpp"
#include "krc/verifier.hpp"
#include "krc/weights_file.hpp"
#include "onelayer_support.hpp"
#include "test_support.hpp"

using namespace krc;
using test::onelayer::compile_at;
using test::onelayer::largest_len;
using test::onelayer::words_of_length;

namespace {

constexpr long long kMostExhaustiveWords = 1 << 17;
constexpr long long kMostCountedWords = 1 << 12;

// The words every onelayer network is checked on beyond the verifier's: for a counting code
// with one counted class and an identity letter, c^m e^(L-m) for every m.
std::vector<std::vector<LetterId>> count_words(const Automaton& a, const OneLayerPlan& plan) {
  std::vector<std::vector<LetterId>> words;
  if (plan.code != ContextCode::Counts) return words;
  long counted = -1, identity = -1;
  for (LetterId l = 0; l < a.letter_count(); ++l) {
    if (plan.letter_code[l] == 0 && identity < 0) identity = l;
    if (plan.letter_code[l] != 0) {
      if (counted >= 0 && plan.letter_code[l] != plan.letter_code[counted]) return {};
      counted = l;
    }
  }
  if (counted < 0 || identity < 0) return words;
  for (int m = 0; m <= plan.max_len; ++m) {
    std::vector<LetterId> w(plan.max_len, static_cast<LetterId>(identity));
    std::fill(w.begin(), w.begin() + m, static_cast<LetterId>(counted));
    words.push_back(w);
  }
  return words;
}

// Every word of the largest length the verifier may enumerate (all of max_len for positional
// codes), random words of length max_len, and the count words. Where there are count words,
// their prefixes already reach every (length, count) pair, so the exhaustive part stays short.
void require_verified(const Automaton& a, const CompileResult& built, long long random_words) {
  const Network& net = built.network;
  const auto words = count_words(a, *built.onelayer);
  const long long most_words = words.empty() ? kMostExhaustiveWords : kMostCountedWords;
  VerifyOptions options;
  options.exhaustive_length = default_exhaustive_length(a.letter_count(), net.max_len, most_words);
  if (built.onelayer->code != ContextCode::Counts)
    REQUIRE(*options.exhaustive_length == net.max_len);
  options.max_exhaustive_words = most_words;
  options.random_words = test::scaled(random_words);
  options.seed = 12;
  options.forward.arithmetic = Arithmetic::Float32;  // a plain float32 framework's sums
  const VerifyReport report = verify(net, a, options);
  CAPTURE(format_report(report, a));
  REQUIRE(report.ok());
  ForwardOptions float32;
  float32.arithmetic = Arithmetic::Float32;
  const auto predicted = predict_states(net, words, float32);
  for (std::size_t i = 0; i < words.size(); ++i) {
    CAPTURE(i);
    REQUIRE(predicted[i] == a.run(words[i]));
  }
}

std::string spell(const Automaton& a, const std::vector<LetterId>& word) {
  std::string line;
  for (LetterId l : word) line += (line.empty() ? "" : " ") + a.letter_name(l);
  return line;
}

}  // namespace

// Every reference automaton at full KRC_TEST_SCALE; at a smaller scale the sample
// test::scaled_sample keeps (the sanitizer build spends minutes on each).
TEST_CASE("onelayer: every reference automaton verifies at the largest max-len it reports") {
  const auto names = test::scaled_sample(test::reference_automaton_names());
  MESSAGE(names.size() << " of " << test::reference_automaton_names().size()
                       << " reference automata");
  for (const auto& name : names) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const int L = largest_len(a);
    MESSAGE(name << ": largest max-len " << L);
    if (a.letter_count() == 2 && a.state_count() <= 8) CHECK(L >= 8);
    const CompileResult built = compile_at(a, L);
    CHECK(built.onelayer->largest_len == L);
    require_verified(a, built, 100);
  }
}

// numpy's float32 pass on the network compiled at the largest max-len: every word of that
// length, or kMostNumpyWords of them drawn without repetition where there are more (numpy takes
// about 10 ms a word; krc's verifier above runs them all), or for a counting code (L = 1,024:
// numpy runs T x T attention and ~2 L hidden units densely, 2 to 4 s a word) one word: a count
// word, else a random one.
constexpr std::size_t kMostNumpyWords = 256;
static void numpy_agrees(const std::string& name, std::mt19937_64& rng) {
  CAPTURE(name);
  test::TempDir dir;
  const Automaton a = test::reference_automaton(name);
  const CompileResult built = compile_at(a, largest_len(a));
  const int L = built.network.max_len;
  std::vector<std::vector<LetterId>> words;
  if (built.onelayer->code == ContextCode::Counts) {
    const auto all = count_words(a, *built.onelayer);
    if (!all.empty()) {
      words.push_back(all[all.size() / 3]);
    } else {
      std::uniform_int_distribution<LetterId> letter(0,
                                                     static_cast<LetterId>(a.letter_count() - 1));
      words.emplace_back(L);
      for (auto& l : words.back()) l = letter(rng);
    }
  } else {  // their prefixes are every shorter word
    words = words_of_length(a.letter_count(), L);
    if (words.size() > kMostNumpyWords) {
      std::shuffle(words.begin(), words.end(), rng);
      words.resize(kMostNumpyWords);
    }
  }
  std::vector<std::string> lines;
  for (const auto& w : words) lines.push_back(spell(a, w));
  const std::string model =
      test::write_file(dir, name + ".safetensors", network_to_safetensors(built.network));
  const auto out = test::run_reference_forward(dir, model, lines, {"--float32"});
  REQUIRE(out.size() == words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    CAPTURE(lines[i]);
    std::vector<std::string> expected;
    for (StateId q : a.run(words[i])) expected.push_back(a.state_name(q));
    REQUIRE(out[i]["states"].get<std::vector<std::string>>() == expected);
  }
}

TEST_CASE("onelayer: numpy's float32 forward pass agrees at the largest max-len, part 1") {
  std::mt19937_64 rng(5);
  const auto names = test::reference_automaton_names();
  for (std::size_t i = 0; i < names.size(); i += 2) numpy_agrees(names[i], rng);
}
TEST_CASE("onelayer: numpy's float32 forward pass agrees at the largest max-len, part 2") {
  std::mt19937_64 rng(6);
  const auto names = test::reference_automaton_names();
  for (std::size_t i = 1; i < names.size(); i += 2) numpy_agrees(names[i], rng);
}

// Random automata with 2-8 states and 1-3 letters, at the largest max-len each reports (counting
// codes, which reach far, at most 512), in parts that ctest runs in parallel.
static void random_part(int part) {
  std::mt19937_64 rng(4000 + part);
  for (int i = 0; i < test::scaled(40); ++i) {
    Automaton a = test::random_automaton(rng, 8, 3);
    while (a.state_count() < 2) a = test::random_automaton(rng, 8, 3);
    CAPTURE(part);
    CAPTURE(i);
    CAPTURE(automaton_to_json(a).dump());
    const int largest = largest_len(a);
    if (a.letter_count() == 2) CHECK(largest >= 8);
    const OneLayerPlan plan = plan_onelayer(a, 1, {});
    const int L = plan.code == ContextCode::Counts ? std::min(largest, 512) : largest;
    require_verified(a, compile_at(a, L), 20);
  }
}
TEST_CASE("onelayer: random automata verify at their largest max-len, part 1") { random_part(1); }
TEST_CASE("onelayer: random automata verify at their largest max-len, part 2") { random_part(2); }

namespace {

// The head's value z at the last position of `word`, with every operation in type T: scores
// from the network's weights, exp, the denominator and the weighted sum accumulated one term
// at a time, from BOS up or from the last position down.
template <typename T>
T head_value(const Network& net, const std::vector<LetterId>& word, bool downwards) {
  const AttentionHead& head = net.layers.at(0).heads.at(0);
  const int n = static_cast<int>(word.size()) + 1;
  auto row = [&](int t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    return Eigen::VectorXf(net.token_embedding.row(token) + net.position_embedding.row(t));
  };
  auto project = [](const Eigen::VectorXf& x, const SparseMatrix& m) {  // one column: a scalar
    T sum = 0;
    for (int r = 0; r < m.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(m, r); it; ++it) sum += T(x[r]) * T(it.value());
    return sum;
  };
  const T q = project(row(n - 1), head.query);
  std::vector<T> s(n), v(n);
  for (int j = 0; j < n; ++j) {
    s[j] = T(net.attention_scale) * q * project(row(j), head.key);
    v[j] = project(row(j), head.value);
  }
  const T m = *std::max_element(s.begin(), s.end());
  T z = 0, sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(s[downwards ? n - 1 - i : i] - m);
  for (int i = 0; i < n; ++i) {
    const int j = downwards ? n - 1 - i : i;
    z += std::exp(s[j] - m) / sum * v[j];
  }
  SparseMatrix::InnerIterator out(head.output, 0);
  return z * T(out.value());
}

}  // namespace

TEST_CASE("onelayer: a float32 softmax stays within the plan's error bound") {
  for (const char* name :
       {"parity", "cyclic_5", "flipflop_2", "dihedral_3", "abab", "quaternion"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const int L = std::min(largest_len(a), 9);
    const CompileResult built = compile_at(a, L);
    const double bound = built.onelayer->relative_error;
    double worst = 0;
    for (int t = 1; t <= L; ++t) {
      for (const auto& w : words_of_length(a.letter_count(), t)) {
        const long double exact = head_value<long double>(built.network, w, false);
        for (bool down : {false, true}) {
          const double z = head_value<float>(built.network, w, down);
          if (exact == 0) {  // a prefix of identity letters under a counting code
            REQUIRE(z == 0);
            continue;
          }
          const double error = std::abs(z - double(exact)) / double(exact);
          worst = std::max(worst, error);
          REQUIRE(error <= bound);
        }
      }
    }
    MESSAGE(std::string(name) << ": worst float32 error " << worst << " of the bound " << bound);
  }
}
