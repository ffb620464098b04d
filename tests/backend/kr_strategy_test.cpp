#include <doctest/doctest.h>

#include "krc/automaton_json.hpp"
#include "krc/compile.hpp"
#include "naive_forward.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

Automaton reference(const std::string& name) {
  return automaton_from_json(
      nlohmann::json::parse(test::read_text(test::reference_dir() / "automata" / (name + ".json"))),
      name);
}

// Random words of length max_len through the plain oracle forward pass: every position must
// give the automaton's state.
void check_against_automaton(const Automaton& a, const Network& net, int words,
                             std::mt19937_64& rng, AttentionKind attention) {
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(a.letter_count() - 1));
  for (int w = 0; w < words; ++w) {
    std::vector<LetterId> word(net.max_len);
    for (auto& l : word) l = letter(rng);
    auto expected = a.run(word);
    auto actual = test::naive_states(net, word, attention);
    for (std::size_t t = 0; t < expected.size(); ++t) {
      CAPTURE(w);
      CAPTURE(t);
      REQUIRE(actual[t] == static_cast<int>(expected[t]));
    }
  }
}

Network compile_kr(const Automaton& a, int max_len) {
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = max_len;
  return compile(a, options).network;
}

}  // namespace

TEST_CASE("kr networks of small reference automata track the automaton") {
  std::mt19937_64 rng(5);
  for (const char* name : {"parity", "cyclic_3", "cyclic_6", "flipflop_3", "gridworld_4", "abab",
                           "dihedral_3", "quaternion", "full_transformations_3", "symmetric_3"}) {
    CAPTURE(name);
    Automaton a = reference(name);
    Network net = compile_kr(a, 12);
    CHECK_NOTHROW(net.check_shapes());
    check_against_automaton(a, net, 12, rng, AttentionKind::Softmax);
    check_against_automaton(a, net, 4, rng, AttentionKind::Hard);
  }
}

TEST_CASE("kr networks of random automata track the automaton") {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 40; ++i) {
    Automaton a = test::random_automaton(rng, 5, 3);
    CAPTURE(a.name());
    CAPTURE(i);
    check_against_automaton(a, compile_kr(a, 10), 5, rng, AttentionKind::Softmax);
  }
}
