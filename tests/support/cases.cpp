#include "cases.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "test_support.hpp"

namespace krc::test {

namespace {

std::string automata_name(const Case& c) {
  if (c.random) {
    const RandomDraw& r = *c.random;
    std::string name = std::to_string(r.count) + " random automata of ";
    name += r.min_states > 1 ? std::to_string(r.min_states) + " to " : std::string("up to ");
    name += std::to_string(r.max_states) + " states and up to " + std::to_string(r.max_letters) +
            " letters, seed " + std::to_string(r.seed);
    return r.solvable_only ? "the solvable ones of " + name : name;
  }
  return c.folder == "automata" ? c.automaton : c.folder + "/" + c.automaton;
}

std::string max_len_name(const Case& c) {
  if (c.max_len != kLargestLen) return "max-len " + std::to_string(c.max_len);
  std::string name = "the largest max-len it reports";
  if (c.counting_cap) name += " (a counting code at most " + std::to_string(c.counting_cap) + ")";
  return name;
}

std::string words_name(const Case& c) {
  const Words& w = c.words;
  if (c.framework == Framework::Numpy && c.strategy != Strategy::OneLayer)
    return std::string("numpy ") + to_string(c.arithmetic) + " on " + std::to_string(w.random) +
           " random words of length max-len, seed " + std::to_string(w.seed) + " + shard";
  if (c.framework == Framework::Numpy)
    return "numpy float32 on every word of length max-len or " + std::to_string(w.random) +
           " of them (a counting code: one), seed " + std::to_string(w.seed) + " + shard";
  std::string name;
  if (w.exhaustive == kAffordable)
    name = "every word of the longest affordable length, ";
  else if (w.exhaustive > 0)
    name = "every word of length " + std::to_string(w.exhaustive) + ", ";
  name += std::to_string(w.random) + " random words";
  if (w.scale != Scale::Test)
    name += w.scale == Scale::Heavy ? " (times KRC_HEAVY_SCALE)" : " (at any scale)";
  name += std::string(" of length ") +
          (w.length ? std::to_string(w.length) : std::string("max-len")) + ", seed " +
          std::to_string(w.seed);
  if (c.strategy == Strategy::OneLayer) name += ", the count words";
  return name;
}

// Every field but the automaton's name, which name() puts first.
std::string fields_name(const Case& c) {
  std::string name = std::string(to_string(c.strategy)) + " at " + max_len_name(c) + ", ";
  if (c.precision != Precision::Float32)
    name += std::string("compiled for ") + to_string(c.precision) + ", ";
  if (c.framework == Framework::Command) name += "through the krc command, ";
  name +=
      std::string(to_string(c.arithmetic)) + " " + to_string(c.attention) + ", " + words_name(c);
  if (c.solvable) name += *c.solvable ? ", solvable" : ", not solvable (a scan level)";
  return name;
}

// The cases over a list of reference automata, split into `shards` by index (every
// shards-th from the shard's first).
std::vector<Case> over(const std::string& among, const std::vector<std::string>& names,
                       const Case& pattern, int shards = 1) {
  std::vector<Case> cases;
  for (std::size_t i = 0; i < names.size(); ++i) {
    Case c = pattern;
    c.automaton = names[i];
    c.among = among;
    c.shards = shards;
    c.shard = static_cast<int>(i % static_cast<std::size_t>(shards));
    cases.push_back(c);
  }
  return cases;
}

std::vector<std::string> without(std::vector<std::string> names,
                                 const std::vector<std::string>& left_out) {
  std::erase_if(names, [&](const std::string& n) {
    return std::find(left_out.begin(), left_out.end(), n) != left_out.end();
  });
  return names;
}

// The sorted stems of the description files in tests/reference/FOLDER.
std::vector<std::string> reference_file_names(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(reference_dir() / folder))
    names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

void append(std::vector<Case>& to, const std::vector<Case>& cases) {
  to.insert(to.end(), cases.begin(), cases.end());
}

// What verified_networks_test.cpp, float32_networks_test.cpp and onelayer_verified_test.cpp
// checked in their own loops before this table: every row keeps their automata, max-lens,
// words and seeds.
std::vector<Case> construction_cases() {
  const auto all = reference_automaton_names();
  const std::vector<std::string> non_solvable{"alternating_5", "symmetric_5",
                                              "full_transformations_5"};
  std::vector<Case> cases;
  // Thousands of networks in float64-accumulate arithmetic for speed (a plain float32 framework
  // evaluates every active comb unit); the float32 rows below check what such a framework does.
  // The scan rows check every word of length 6 and 200 random words a network (500 until
  // 2026-11-29: the four draws at 64 took 91-109 s of CPU each, and the project's CI finished
  // 8 minutes inside its limit). A scan's steps are the same for every word; the random words
  // are a sample of the positions each step's fetch meets.
  const auto f64 = Arithmetic::Float64Accumulate;
  append(cases, over("every reference automaton", all,
                     {.strategy = Strategy::Scan,
                      .max_len = 256,
                      .arithmetic = f64,
                      .words = {6, 200, 256, 2026},
                      .sanitized = {.automata = 4}}));
  for (int part = 1; part <= 4; ++part)
    cases.push_back(
        {.random =
             RandomDraw{.seed = 1000u + part, .count = 250, .max_states = 8, .max_letters = 4},
         .strategy = Strategy::Scan,
         .max_len = 64,
         .arithmetic = f64,
         .words = {6, 200, 64, 2026},
         .sanitized = {.automata = 8}});
  const Case kr{
      .strategy = Strategy::Kr, .max_len = 1024, .arithmetic = f64, .words = {6, 300, 1024, 2026}};
  Case solvable = kr, not_solvable = kr;
  solvable.solvable = true;
  not_solvable.solvable = false;
  append(cases, over("every solvable reference automaton", without(all, non_solvable), solvable));
  // The three non-solvable automata on 100 long words, not 300: 252 s of CPU in a CI run here
  // (2026-11-28), the suite's third longest; their scan levels are the scan rows' code.
  not_solvable.words.random = 100;
  append(cases, over("the non-solvable reference automata", non_solvable, not_solvable));
  // The random draws: 30 long words an automaton, not the reference rows' 300. Each of the
  // three draws is some 100 networks, and 300 words of 1,024 took 6 minutes of both cores a
  // draw on an idle machine (the whole Release suite's budget); every word of length 6 still
  // runs, and the long words still reach every position of the counters' range.
  for (int part = 1; part <= 3; ++part) {
    Case c = kr;
    c.words.random = 30;
    c.random = RandomDraw{.seed = 3000u + part,
                          .count = 100,
                          .max_states = 6,
                          .max_letters = 3,
                          .solvable_only = true};
    cases.push_back(c);
  }
  // 30 words of 4,096 a network, not 100: the row took 442 s of CPU in a CI run here
  // (2026-11-28), the longest of the Release suite, and the project's CI ran past its limit.
  // Each word still runs every scan step over the whole length.
  append(cases, over("gridworld_9 and symmetric_5", {"gridworld_9", "symmetric_5"},
                     {.strategy = Strategy::Scan,
                      .max_len = 4096,
                      .arithmetic = f64,
                      .words = {0, 30, 4096, 2026}}));
  return cases;
}

// Either side of the kr counters' switch from plain counts to blocks of sqrt(T) (kr_plan.cpp:
// plain while T <= 2048 and (p-1)T <= 6144), in what a plain float32 framework computes.
std::vector<Case> float32_cases() {
  std::vector<Case> cases;
  for (Strategy strategy : {Strategy::Scan, Strategy::Kr})
    for (int max_len : {1536, 4096})
      append(cases, over("every reference automaton", reference_automaton_names(),
                         {.strategy = strategy,
                          .max_len = max_len,
                          .arithmetic = Arithmetic::Float32,
                          .words = {0, 2, max_len, 1000u + static_cast<unsigned>(max_len)}}));
  return cases;
}

// onelayer networks at the largest max-len their plan reports, in float32.
std::vector<Case> onelayer_cases() {
  std::vector<Case> cases;
  const Case pattern{
      .strategy = Strategy::OneLayer, .max_len = kLargestLen, .arithmetic = Arithmetic::Float32};
  Case reference = pattern;
  reference.words = {kAffordable, 100, 0, 12};
  reference.sample = Sample::Scaled;  // below KRC_TEST_SCALE 1, a sample (seconds each)
  append(cases, over("every reference automaton", reference_automaton_names(), reference));
  for (int part = 1; part <= 2; ++part) {
    Case c = pattern;
    c.random = RandomDraw{
        .seed = 4000u + part, .count = 40, .max_states = 8, .max_letters = 3, .min_states = 2};
    c.counting_cap = 512;  // counting codes reach far
    c.words = {kAffordable, 20, 0, 12};
    cases.push_back(c);
  }
  // numpy takes about 10 ms a word, 2 to 4 s on a counting code's 1,024: two shards.
  Case numpy = pattern;
  numpy.framework = Framework::Numpy;
  numpy.words = {0, 256, 0, 5};
  append(cases, over("every reference automaton", reference_automaton_names(), numpy, 2));
  return cases;
}

}  // namespace

std::string Case::name() const { return automata_name(*this) + ": " + fields_name(*this); }

std::string Case::group_name() const {
  std::string automata = among;
  if (random)
    automata = automata_name(*this);
  else if (shards > 1)
    automata += ", shard " + std::to_string(shard + 1) + " of " + std::to_string(shards);
  else if (sample == Sample::Scaled)
    automata += " (a sample below KRC_TEST_SCALE 1)";
  else if (sample == Sample::Heavy)
    automata += " (KRC_HEAVY_SCALE's sample)";
  return automata + ": " + fields_name(*this);
}

CompileOptions compile_options(const Case& c, int max_len) {
  CompileOptions options;
  options.strategy = c.strategy;
  options.max_len = max_len;
  options.attention = c.attention;
  options.precision = c.precision;
  return options;
}

long long scaled_words(const Words& words) {
  switch (words.scale) {
    case Scale::Test:
      return scaled(words.random);
    case Scale::Heavy:
      return heavy_scaled(words.random);
    case Scale::None:
      return words.random;
  }
  return words.random;
}

// Issue 10's longest check, at max-len 65536 in a plain float32 framework, and issue 20's: every
// reference automaton (the classic ones and SgpDec's random ones) compiled for bf16 and for fp16
// at max-len 4096, right in that format (the model cast to it, runtime/README.md "bf16 and
// fp16"). Through the krc command, as a user runs them.
// Scan's row runs at 16384: its sample's abab scan has integer coordinates, which defeat the
// runtime's key tree (issue 37), so one word of 65536 took over 26 minutes of CPU, more than the
// rest of the Release suite, and CI ran past its limit; kr, whose depth does not grow with the
// length, keeps 65536 (12 minutes).
std::vector<Case> heavy_cases() {
  std::vector<Case> cases;
  for (Strategy strategy : {Strategy::Scan, Strategy::Kr})
    append(cases, over("every reference automaton", reference_automaton_names(),
                       {.strategy = strategy,
                        .max_len = strategy == Strategy::Kr ? 65536 : 16384,
                        .arithmetic = Arithmetic::Float32,
                        .framework = Framework::Command,
                        .words = {0, 20, 0, 7, Scale::Heavy},
                        .sample = Sample::Heavy}));
  const std::pair<Precision, Arithmetic> narrow[] = {{Precision::BFloat16, Arithmetic::BFloat16},
                                                     {Precision::Float16, Arithmetic::Float16}};
  for (const auto& [precision, arithmetic] : narrow) {
    const Case pattern{.strategy = Strategy::Auto,
                       .max_len = 4096,
                       .precision = precision,
                       .arithmetic = arithmetic,
                       .framework = Framework::Command,
                       .words = {0, 3, 0, 7, Scale::None},
                       .sample = Sample::Heavy};
    const std::string among = "every reference automaton and SgpDec's random ones";
    append(cases, over(among, reference_automaton_names(), pattern));
    Case random = pattern;
    random.folder = "random/automata";
    append(cases, over(among, reference_file_names(random.folder), random));
  }
  return cases;
}

namespace {

// Issue 31: networks compiled for bf16 and for fp16 from random automata of 9 to 40 states, where
// the planner takes binary coordinates (compiler/README.md "bf16 and fp16"), right in that format
// in krc's runtime and in numpy's independent forward pass of the model cast to it.
std::vector<Case> narrow_cases() {
  std::vector<Case> cases;
  const std::pair<Precision, Arithmetic> narrow[] = {{Precision::BFloat16, Arithmetic::BFloat16},
                                                     {Precision::Float16, Arithmetic::Float16}};
  unsigned seed = 5100;
  for (const auto& [precision, arithmetic] : narrow) {
    const Case krc{
        .random =
            RandomDraw{
                .seed = ++seed, .count = 6, .max_states = 40, .max_letters = 4, .min_states = 9},
        .strategy = Strategy::Scan,
        .max_len = 256,
        .precision = precision,
        .arithmetic = arithmetic,
        .words = {4, 10, 256, 31},
        .sanitized = {.automata = 2, .words = 4}};
    cases.push_back(krc);
    Case numpy = krc;
    numpy.framework = Framework::Numpy;
    numpy.random->seed = seed + 10;
    numpy.random->count = 2;
    numpy.random->max_states = 24;
    numpy.words = {0, 2, 256, 32};
    cases.push_back(numpy);
  }
  return cases;
}

}  // namespace

std::vector<Case> end_to_end_cases() {
  std::vector<Case> cases = construction_cases();
  append(cases, narrow_cases());
  append(cases, float32_cases());
  append(cases, onelayer_cases());
  return cases;
}

std::vector<Shard> shards_of(const std::vector<Case>& cases) {
  std::vector<Shard> shards;
  for (const Case& c : cases) {
    const std::string name = c.group_name();
    auto it =
        std::find_if(shards.begin(), shards.end(), [&](const Shard& s) { return s.name == name; });
    if (it == shards.end()) it = shards.insert(shards.end(), Shard{name, {}});
    it->cases.push_back(c);
  }
  return shards;
}

}  // namespace krc::test
