#include <doctest/doctest.h>

#include "krc/assemble.hpp"
#include "krc/automaton_json.hpp"
#include "krc/compile.hpp"
#include "krc/scan_strategy.hpp"
#include "krc/schedule.hpp"
#include "naive_forward.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

Automaton reference(const std::string& name) {
  return automaton_from_json(
      nlohmann::json::parse(test::read_text(test::reference_dir() / "automata" / (name + ".json"))),
      name);
}

// Every position of `words` random words of length max_len, run through the plain oracle
// forward pass, must give the automaton's state.
void check_against_automaton(const Automaton& a, const Network& net, int words,
                             std::mt19937_64& rng, AttentionKind attention) {
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(a.letter_count() - 1));
  for (int w = 0; w < words; ++w) {
    std::vector<LetterId> word(net.max_len);
    for (auto& l : word) l = letter(rng);
    auto expected = a.run(word);
    auto actual = test::naive_states(net, word, attention);
    for (std::size_t t = 0; t < expected.size(); ++t) {
      CAPTURE(t);
      REQUIRE(actual[t] == static_cast<int>(expected[t]));
    }
  }
}

}  // namespace

TEST_CASE("scan networks of small reference automata track the automaton") {
  std::mt19937_64 rng(7);
  for (const char* name : {"parity", "cyclic_3", "dihedral_3", "flipflop_3", "gridworld_4",
                           "abab", "full_transformations_3", "quaternion"}) {
    CAPTURE(name);
    Automaton a = reference(name);
    CompileOptions options;
    options.strategy = Strategy::Scan;
    options.max_len = 12;
    Network net = compile(a, options).network;
    CHECK_NOTHROW(net.check_shapes());
    // ceil(log2 12) = 4 doubling steps.
    CHECK(net.layers.size() == 4);
    check_against_automaton(a, net, 20, rng, AttentionKind::Softmax);
    check_against_automaton(a, net, 5, rng, AttentionKind::Hard);
  }
}

TEST_CASE("scan networks of random automata track the automaton") {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 30; ++i) {
    Automaton a = test::random_automaton(rng, 6, 3);
    CAPTURE(a.name());
    CompileOptions options;
    options.strategy = Strategy::Scan;
    options.max_len = 9;
    check_against_automaton(a, compile(a, options).network, 6, rng, AttentionKind::Softmax);
  }
}
