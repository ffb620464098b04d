#include "krc/automata/automaton.hpp"

#include <doctest/doctest.h>

#include "krc/automata/automaton_json.hpp"
#include "test_support.hpp"

using namespace krc;

TEST_CASE("run follows delta from the initial state") {
  Automaton parity("parity", {"even", "odd"}, {"0", "1"}, {{0, 1}, {1, 0}}, 0);
  std::vector<LetterId> word{1, 1, 0, 1};
  CHECK(parity.run(word) == std::vector<StateId>{0, 1, 0, 0, 1});
}

TEST_CASE("the constructor rejects inconsistent parts") {
  CHECK_THROWS_AS(Automaton("x", {"a", "a"}, {"l"}, {{0, 1}}, 0), std::invalid_argument);
  CHECK_THROWS_AS(Automaton("x", {}, {"l"}, {{}}, 0), std::invalid_argument);   // no states
  CHECK_THROWS_AS(Automaton("x", {"a"}, {}, {{0}}, 0), std::invalid_argument);  // a stray row
  CHECK_THROWS_AS(Automaton("x", {"a", "b"}, {"l"}, {{0, 2}}, 0), std::invalid_argument);
}

TEST_CASE("no letters: an automaton that reads only the empty word, and round-trips as JSON") {
  const Automaton a("x", {"a", "b"}, {}, {}, 1, {1});
  CHECK(a.letter_count() == 0);
  CHECK(a.run({}) == std::vector<StateId>{1});
  CHECK(automaton_from_json(automaton_to_json(a), "round trip") == a);
}

TEST_CASE("native JSON round-trips every reference automaton") {
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    auto doc = nlohmann::json::parse(
        test::read_text(test::reference_dir() / "automata" / (name + ".json")));
    Automaton a = automaton_from_json(doc, name);
    CHECK(a.name() == doc["name"]);
    CHECK(a.state_count() == doc["states"].size());
    CHECK(automaton_from_json(automaton_to_json(a), "round trip") == a);
  }
}
