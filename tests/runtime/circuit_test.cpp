#include "krc/runtime/circuit.hpp"

#include <doctest/doctest.h>

#include <string>

#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"

using namespace krc;

namespace {

Network compiled(const std::string& family, std::optional<int> n, Strategy strategy) {
  CompileOptions options;
  options.strategy = strategy;
  options.max_len = 6;
  return compile(zoo_automaton(family, n), options).network;
}

std::vector<LetterId> letters_of(const Automaton& a, const nlohmann::json& word) {
  std::vector<LetterId> out;
  for (const auto& letter : word) out.push_back(static_cast<LetterId>(a.find_letter(letter)));
  return out;
}

// Every unit's record against the automaton: a necessary one's witness names the state the
// automaton reaches there and an ablated answer that differs from it.
void check_units(const Automaton& a, const nlohmann::json& circuit) {
  long long redundant = 0, units = 0;
  for (const auto& [name, edge] : circuit["edges"].items()) {
    const nlohmann::json list =
        edge.contains("through") ? edge["through"] : nlohmann::json::array({edge});
    for (const auto& unit : list) {
      CAPTURE(name);
      ++units;
      if (unit["redundant"] == true) {
        CHECK(unit["necessary"] == false);
        ++redundant;
        continue;
      }
      REQUIRE(unit["necessary"] == true);
      const auto& w = unit["witness"];
      const auto states = a.run(letters_of(a, w["word"]));
      const std::string expected = a.state_name(states.at(w["position"].get<std::size_t>()));
      CHECK(w["expected"] == expected);
      CHECK(w["ablated"] != expected);
    }
  }
  CHECK(units == circuit["check"]["units"].get<long long>());
  CHECK(redundant == static_cast<long long>(circuit["check"]["redundant"].size()));
}

}  // namespace

TEST_CASE("circuit: zoo circuits are right alone, every unit necessary or marked redundant") {
  struct Case {
    const char* family;
    std::optional<int> n;
    Strategy strategy;
  };
  for (const Case& c : {Case{"parity", std::nullopt, Strategy::Scan},
                        Case{"flipflop", 2, Strategy::Kr}, Case{"cyclic", 3, Strategy::Kr}}) {
    CAPTURE(c.family);
    const Network net = compiled(c.family, c.n, c.strategy);
    const Automaton a = zoo_automaton(c.family, c.n);
    for (auto granularity : {CircuitGranularity::Head, CircuitGranularity::Subspace}) {
      nlohmann::json circuit = circuit_json(net, granularity);
      CHECK(circuit["granularity"] == to_string(granularity));
      CHECK(circuit["nodes"].contains("input"));
      CHECK(circuit["nodes"].contains("logits"));
      for (std::size_t L = 0; L < net.layers.size(); ++L)
        for (std::size_t h = 0; h < net.layers[L].heads.size(); ++h)
          CHECK(circuit["nodes"]["a" + std::to_string(L) + ".h" + std::to_string(h)]["name"] ==
                net.layers[L].heads[h].name);
      CircuitCheckOptions options;
      options.max_exhaustive_words = 64;
      options.random_words = 2;
      CHECK(check_circuit(net, a, circuit, options));
      CHECK(circuit["check"]["circuit_only"]["wrong"] == 0);
      // Exhaustive words of length 6 (2^6 = 64), each with 7 positions, then 2 random ones.
      if (a.letter_count() == 2)
        CHECK(circuit["check"]["circuit_only"]["positions"] == 64 * 7 + 2 * 7);
      check_units(a, circuit);
    }
  }
}

TEST_CASE(
    "circuit: a head whose output nothing reads is outside the circuit, and an edge "
    "that alone carries the logits' input is necessary") {
  Network net = compiled("flipflop", 2, Strategy::Kr);
  const Automaton a = zoo_automaton("flipflop", 2);
  // A copy of the first head that writes nothing: it reads, but has no edge out.
  AttentionHead dead = net.layers[0].heads.at(0);
  dead.output.setZero();
  net.layers[0].heads.push_back(dead);
  const std::string name = "a0.h" + std::to_string(net.layers[0].heads.size() - 1);
  nlohmann::json circuit = circuit_json(net, CircuitGranularity::Head);
  CHECK(circuit["nodes"][name]["in_graph"] == false);
  for (const auto& [edge, _] : circuit["edges"].items()) CHECK(edge.rfind(name + "->", 0) != 0);
  CircuitCheckOptions options;
  options.max_exhaustive_words = 64;
  options.random_words = 0;
  CHECK(check_circuit(net, a, circuit, options));
  // What it reads goes nowhere: every edge into it is redundant.
  int into_dead = 0;
  for (const auto& [edge, value] : circuit["edges"].items())
    if (value["to"] == name) {
      ++into_dead;
      CHECK(value["redundant"] == true);
    }
  CHECK(into_dead > 0);
  // The logits read only the state subspace; when one writer writes it, removing that edge
  // leaves every logit 0 (a tie at every position): it must be necessary.
  std::vector<std::string> into_logits;
  for (const auto& [edge, value] : circuit["edges"].items())
    if (value["to"] == "logits") into_logits.push_back(edge);
  REQUIRE(!into_logits.empty());
  if (into_logits.size() == 1) CHECK(circuit["edges"][into_logits[0]]["necessary"] == true);
}

TEST_CASE("circuit: an unknown granularity is refused") {
  CHECK_THROWS_AS(circuit_granularity_from_string("neuron"), std::invalid_argument);
  CHECK(circuit_granularity_from_string("subspace") == CircuitGranularity::Subspace);
}
