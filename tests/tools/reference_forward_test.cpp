// tools/reference_forward.py, the numpy forward pass written from README's "Weights file
// format" section alone, against `krc run --json` on networks that `krc compile` built from
// zoo automata, and both against the automaton itself.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "krc/automata/automaton_json.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

// One line per word, letters separated by spaces.
std::vector<std::string> word_lines(const std::vector<std::vector<std::string>>& words) {
  std::vector<std::string> lines;
  for (const auto& w : words) {
    std::string line;
    for (std::size_t i = 0; i < w.size(); ++i) line += (i ? " " : "") + w[i];
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("reference_forward.py, krc run and the automaton agree on compiled zoo networks") {
  struct Case {
    const char* automaton;
    std::vector<std::string> compile_options;
  };
  const Case cases[] = {
      {"parity", {"--strategy", "kr"}},
      {"cyclic_5", {"--strategy", "scan"}},
      {"flipflop_3", {"--attention", "hard"}},
      {"symmetric_3", {}},
      {"gridworld_4", {"--dense"}},
  };
  std::mt19937_64 rng(2);
  test::TempDir dir;
  for (const auto& c : cases) {
    CAPTURE(c.automaton);
    const auto source =
        test::source_dir() / "automata" / "zoo" / (std::string(c.automaton) + ".json");
    const Automaton automaton =
        automaton_from_json(json::parse(test::read_text(source)), source.string());
    const std::string model = (dir / (std::string(c.automaton) + ".safetensors")).string();
    std::vector<std::string> compile{"compile", source.string(), "-o", model, "--max-len", "40"};
    compile.insert(compile.end(), c.compile_options.begin(), c.compile_options.end());
    const auto compiled = test::run_krc(compile);
    REQUIRE_MESSAGE(compiled.status == 0, compiled.err);

    std::vector<std::vector<std::string>> words{{}};
    std::vector<std::vector<StateId>> expected{automaton.run(std::vector<LetterId>{})};
    for (int w = 0; w < 5; ++w) {
      std::vector<LetterId> word(std::uniform_int_distribution<int>(1, 40)(rng));
      for (auto& a : word) a = static_cast<LetterId>(rng() % automaton.letter_count());
      std::vector<std::string> letters;
      for (LetterId a : word) letters.push_back(automaton.letter_name(a));
      words.push_back(letters);
      expected.push_back(automaton.run(word));
    }
    const auto reference = test::run_reference_forward(dir, model, word_lines(words));
    REQUIRE(reference.size() == words.size());
    // Everything in float32, as a plain float32 framework runs it (short words: the limits of
    // float32 sums over long words are measured, not asserted).
    const auto reference32 =
        test::run_reference_forward(dir, model, word_lines(words), {"--float32"});
    REQUIRE(reference32.size() == words.size());
    for (std::size_t w = 0; w < words.size(); ++w) {
      std::vector<std::string> args{"run", model, "--json"};
      args.insert(args.end(), words[w].begin(), words[w].end());
      const auto run = test::run_krc(args);
      REQUIRE_MESSAGE(run.status == 0, run.err);
      const json krc_states = json::parse(run.out)["states"];
      json automaton_states = json::array();
      for (StateId s : expected[w]) automaton_states.push_back(automaton.state_name(s));
      CHECK(reference[w]["states"] == automaton_states);
      CHECK(reference32[w]["states"] == automaton_states);
      CHECK(krc_states == automaton_states);
    }
  }
}
