// How a case of the table (cases.hpp) is checked: compiled as its fields say and run by its
// framework, the automaton itself the oracle at every position of every tested word.
//
// krc's verifier runs the words the case names in its arithmetic. A onelayer network is checked
// at the largest max-len its plan reports (every word of the longest length within the word
// budget; for a counting code, whose max-lens are too long to run every word, also the words
// 1^m 0^(L-m), which cover every (length, count) pair the value depends on). numpy's float32
// pass (tools/reference_forward.py --float32) runs every word of the max-len, or 256 of them.
// The krc command compiles the reference file and verifies it with `krc verify --json`.
#include "case_checks.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <random>
#include <utility>

#include "krc/automata/automaton_json.hpp"
#include "krc/decompose/holonomy.hpp"
#include "krc/runtime/verifier.hpp"
#include "krc/runtime/weights_file.hpp"
#include "onelayer_support.hpp"
#include "test_support.hpp"

namespace krc::test {

bool solvable(const Automaton& a) {
  DecomposeOptions options;
  options.build_tables = false;
  return HolonomyDecomposition::compute(a, options).solvable();
}

namespace {

// The automata of a random case: its count at KRC_TEST_SCALE; a solvable-only draw goes on up
// to the full count until one is solvable.
// The draw's automata: scaled(count) of them (the solvable ones among them, drawing on up to
// count until one is), or where `most` is given the first `most` that qualify (the sanitized
// build's sample, Sanitized::automata, whatever the scale), from the same generator.
std::vector<Automaton> draw(const test::RandomDraw& r, std::optional<int> most) {
  std::mt19937_64 rng(r.seed);
  std::vector<Automaton> automata;
  const auto enough = [&](int drawn) {
    const int kept = static_cast<int>(automata.size());
    return most ? kept >= *most : drawn >= test::scaled(r.count) && kept > 0;
  };
  int drawn = 0;
  for (; drawn < r.count && !enough(drawn); ++drawn) {
    Automaton a = test::random_automaton(rng, r.max_states, r.max_letters);
    while (static_cast<int>(a.state_count()) < r.min_states)
      a = test::random_automaton(rng, r.max_states, r.max_letters);
    if (!r.solvable_only || solvable(a)) automata.push_back(std::move(a));
  }
  if (r.solvable_only)
    MESSAGE(automata.size() << " of " << drawn << " random automata were solvable");
  CHECK(!automata.empty());
  return automata;
}

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

constexpr long long kMostExhaustiveWords = 1 << 17;
constexpr long long kMostCountedWords = 1 << 12;

VerifyOptions verify_options(const Case& c, const Automaton& a, const CompileResult& built) {
  const Network& net = built.network;
  VerifyOptions options;
  options.forward.arithmetic = c.arithmetic;
  options.forward.attention = c.attention;
  options.random_words = scaled_words(c.words);
  options.seed = c.words.seed;
  if (c.words.length) options.random_length = c.words.length;
  if (c.words.exhaustive != test::kAffordable) {
    options.exhaustive_length = std::min(c.words.exhaustive, net.max_len);
    options.max_exhaustive_words = 1LL << 40;
    return options;
  }
  // Where there are count words, their prefixes already reach every (length, count) pair, so
  // the exhaustive part stays short.
  REQUIRE(built.onelayer);
  const bool counted = !count_words(a, *built.onelayer).empty();
  options.max_exhaustive_words = counted ? kMostCountedWords : kMostExhaustiveWords;
  options.exhaustive_length =
      default_exhaustive_length(a.letter_count(), net.max_len, options.max_exhaustive_words);
  if (built.onelayer->code != ContextCode::Counts)
    REQUIRE(*options.exhaustive_length == net.max_len);
  return options;
}

void check_with_krc(const Case& c, const Automaton& a, const CompileResult& built) {
  const VerifyOptions options = verify_options(c, a, built);
  const VerifyReport report = verify(built.network, a, options);
  CAPTURE(format_report(report, a));
  REQUIRE(report.ok());
  CHECK(report.arithmetic == c.arithmetic);
  CHECK(report.attention == c.attention);
  REQUIRE(report.words == report.exhaustive_words + scaled_words(c.words));
  if (*options.exhaustive_length == 0)
    CHECK(report.positions ==
          scaled_words(c.words) * (options.random_length.value_or(built.network.max_len) + 1));
  if (c.strategy != Strategy::OneLayer) return;
  ForwardOptions forward;
  forward.arithmetic = c.arithmetic;
  forward.attention = c.attention;
  const auto words = count_words(a, *built.onelayer);
  const auto predicted = predict_states(built.network, words, forward);
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

// numpy's words: for a onelayer network every word of the max-len, or c.words.random of them
// drawn without repetition where there are more (numpy takes about 10 ms a word; krc's verifier
// runs them all), or for a counting code (numpy runs T x T attention and ~2 L hidden units
// densely, 2 to 4 s a word) one word: a count word, else a random one; for the other strategies
// c.words.random random words of the max-len.
void check_with_numpy(const Case& c, const Automaton& a, const CompileResult& built,
                      std::mt19937_64& rng) {
  test::TempDir dir;
  const int L = built.network.max_len;
  std::vector<std::vector<LetterId>> words;
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(a.letter_count() - 1));
  if (!built.onelayer) {
    for (long long i = 0; i < c.words.random; ++i) {
      words.emplace_back(L);
      for (auto& l : words.back()) l = letter(rng);
    }
  } else if (built.onelayer->code == ContextCode::Counts) {
    const auto all = count_words(a, *built.onelayer);
    if (!all.empty()) {
      words.push_back(all[all.size() / 3]);
    } else {
      words.emplace_back(L);
      for (auto& l : words.back()) l = letter(rng);
    }
  } else {  // their prefixes are every shorter word
    words = test::onelayer::words_of_length(a.letter_count(), L);
    if (words.size() > static_cast<std::size_t>(c.words.random)) {
      std::shuffle(words.begin(), words.end(), rng);
      words.resize(static_cast<std::size_t>(c.words.random));
    }
  }
  std::vector<std::string> lines;
  for (const auto& w : words) lines.push_back(spell(a, w));
  const std::string model =
      test::write_file(dir, "case.safetensors", network_to_safetensors(built.network));
  std::vector<std::string> args;
  if (c.arithmetic == Arithmetic::Float32) args.push_back("--float32");
  if (c.arithmetic == Arithmetic::BFloat16) args.push_back("--bf16");
  if (c.arithmetic == Arithmetic::Float16) args.push_back("--fp16");
  const auto out = test::run_reference_forward(dir, model, lines, args);
  REQUIRE(out.size() == words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    CAPTURE(lines[i]);
    std::vector<std::string> expected;
    for (StateId q : a.run(words[i])) expected.push_back(a.state_name(q));
    REQUIRE(out[i]["states"].get<std::vector<std::string>>() == expected);
  }
}

// `krc compile` of the reference file as the case says, then `krc verify --json` on random words
// of full length; the report must count every word and position and find none wrong.
void check_with_command(const Case& c, const std::filesystem::path& file) {
  TempDir dir;
  const std::string model = (dir / "case.safetensors").string();
  std::vector<std::string> args{
      "compile", file.string(), "-o", model, "--max-len", std::to_string(c.max_len), "--json"};
  if (c.strategy != Strategy::Auto) args.insert(args.end(), {"--strategy", to_string(c.strategy)});
  if (c.precision != Precision::Float32)
    args.insert(args.end(), {"--precision", to_string(c.precision)});
  const auto compiled = run_krc(args);
  REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
  const std::string format = to_string(c.precision);
  if (c.precision != Precision::Float32)
    CHECK(nlohmann::json::parse(compiled.out)["precision"]["exact_in"][format] == c.max_len);
  const long long words = scaled_words(c.words);
  const auto verified =
      run_krc({"verify", model, "--arithmetic", to_string(c.arithmetic), "--exhaustive",
               std::to_string(c.words.exhaustive), "--random", std::to_string(words), "--seed",
               std::to_string(c.words.seed), "--json"});
  CHECK_MESSAGE(verified.status == 0, verified.err);
  const auto report = nlohmann::json::parse(verified.out);
  CHECK(report["arithmetic"] == to_string(c.arithmetic));
  CHECK(report["random"]["length"] == c.max_len);
  CHECK(report["random"]["words"] == words);
  CHECK(report["positions"] == words * (c.max_len + 1));
  CHECK(report["wrong_positions"] == 0);
  std::cerr << c.name() << ": " << report["wrong_positions"] << " wrong positions, smallest margin "
            << report["smallest_margin"] << ", " << report["seconds"] << " s\n";
}

// Compiles one automaton as the case says and checks the network.
void check(const Case& c, const Automaton& a, std::mt19937_64& rng) {
  int max_len = c.max_len;
  if (max_len == test::kLargestLen) {
    const OneLayerPlan plan = plan_onelayer(a, 1, {});
    max_len = plan.largest_len;
    MESSAGE(a.name() << ": largest max-len " << max_len);
    if (a.letter_count() == 2 && a.state_count() <= 8) CHECK(max_len >= 8);
    if (c.counting_cap && plan.code == ContextCode::Counts)
      max_len = std::min(max_len, c.counting_cap);
  }
  if (c.solvable) REQUIRE(solvable(a) == *c.solvable);
  const CompileResult built = compile(a, test::compile_options(c, max_len));
  REQUIRE(built.network.max_len == max_len);
  if (c.strategy == Strategy::OneLayer) {
    REQUIRE(built.onelayer);
    if (c.max_len == test::kLargestLen)
      CHECK(built.onelayer->largest_len == plan_onelayer(a, 1, {}).largest_len);
  }
  if (c.solvable == false && c.strategy == Strategy::Kr) {  // scan on its non-solvable levels
    REQUIRE(built.kr);
    bool has_scan_level = false;
    for (const auto& level : built.kr->levels) has_scan_level |= level.mode == LevelMode::Scan;
    CHECK(has_scan_level);
  }
  if (c.framework == test::Framework::Numpy)
    check_with_numpy(c, a, built, rng);
  else
    check_with_krc(c, a, built);
}

// The sanitized build's sample of a shard, as the table says (Case::sanitized): that many of its
// reference automata, evenly spread from the first, each with at most that many random words (a
// random draw is cut where it is drawn).
std::vector<Case> sanitized_sample(const std::vector<Case>& cases) {
  const Sanitized sample = cases.front().sanitized;
  const std::size_t n = cases.size();
  const std::size_t k = std::min(n, static_cast<std::size_t>(std::max(1, sample.automata)));
  std::vector<Case> kept;
  for (std::size_t i = 0; i < k; ++i) {
    Case c = cases[i * n / k];
    c.words.random = std::min(c.words.random, sample.words);
    c.words.scale = Scale::None;
    kept.push_back(c);
  }
  if (cases.front().random)
    MESSAGE("the sanitized build's sample: the draw's first "
            << sample.automata << " automata, at most " << sample.words << " random words");
  else
    MESSAGE("the sanitized build's sample: " << k << " of " << n << " automata, at most "
                                             << sample.words << " random words each");
  return kept;
}

// The shard's cases its Sample keeps: test::scaled_sample or test::heavy_sample of the reference
// automata of each folder, in table order; in the sanitized build, its sanitized sample.
std::vector<Case> sampled(const std::vector<Case>& cases) {
  if (sanitized_build()) return sanitized_sample(cases);
  const Sample sample = cases.front().sample;
  if (sample == Sample::All) return cases;
  std::vector<Case> kept;
  std::vector<std::string> folders;
  for (const Case& c : cases)
    if (std::find(folders.begin(), folders.end(), c.folder) == folders.end())
      folders.push_back(c.folder);
  for (const auto& folder : folders) {
    std::vector<Case> of_folder;
    std::vector<std::string> names;
    for (const Case& c : cases)
      if (c.folder == folder) {
        of_folder.push_back(c);
        names.push_back(c.automaton);
      }
    if (sample == Sample::Scaled) {
      const auto some = scaled_sample(of_folder);
      kept.insert(kept.end(), some.begin(), some.end());
      continue;
    }
    const auto some = heavy_sample(names);
    for (const Case& c : of_folder)
      if (std::find(some.begin(), some.end(), c.automaton) != some.end()) kept.push_back(c);
  }
  MESSAGE(kept.size() << " of " << cases.size() << " reference automata");
  return kept;
}

}  // namespace

void run_shard(const Shard& shard) {
  const std::vector<Case> cases = sampled(shard.cases);
  REQUIRE(!cases.empty());
  // One generator for the shard's random choices beyond the verifier's seed (numpy's words).
  std::mt19937_64 rng(cases.front().words.seed + static_cast<unsigned>(cases.front().shard));
  for (const Case& c : cases) {
    CAPTURE(c.name());
    if (c.framework == Framework::Command) {
      check_with_command(c, reference_dir() / c.folder / (c.automaton + ".json"));
      continue;
    }
    if (!c.random) {
      check(c, reference_automaton(c.automaton), rng);
      continue;
    }
    std::optional<int> most;
    if (sanitized_build()) most = c.sanitized.automata;
    const auto automata = draw(*c.random, most);
    for (std::size_t i = 0; i < automata.size(); ++i) {
      CAPTURE(i);
      CAPTURE(automaton_to_json(automata[i]).dump());
      check(c, automata[i], rng);
    }
  }
}

}  // namespace krc::test
