#include "krc/runtime/circuit.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>

#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "test_support.hpp"
#include "tied_network.hpp"

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

// The check's own float64 pass (circuit_logits, every unit kept) against krc's forward pass in
// float64 and against the automaton, simulated from its zoo JSON file (automata/zoo) by
// looking its transitions up, independently of krc's automaton model and compiler.
namespace {

std::vector<std::string> simulate_zoo_json(const nlohmann::json& automaton,
                                           const std::vector<std::string>& word) {
  const std::vector<std::string> states = automaton["states"];
  std::string state = automaton["initial"];
  std::vector<std::string> out{state};
  for (const std::string& letter : word) {
    const auto at = std::find(states.begin(), states.end(), state) - states.begin();
    state = automaton["transitions"][letter][at].get<std::string>();
    out.push_back(state);
  }
  return out;
}

// The argmax of row t, or -1 when the best two are within `margin` (a tie, or too close for
// two float64 passes summing in different orders to agree on).
int clear_argmax(const Eigen::MatrixXd& logits, int t, double margin) {
  Eigen::Index best = 0;
  logits.row(t).maxCoeff(&best);
  for (Eigen::Index j = 0; j < logits.cols(); ++j)
    if (j != best && logits(t, j) >= logits(t, best) - margin) return -1;
  return static_cast<int>(best);
}

// Every word of the longest length with at most 64 words (their prefixes: every shorter one),
// and 4 seeded random words of max_len letters.
std::vector<std::vector<LetterId>> test_words(int letters, int max_len) {
  int length = 0;
  long long count = 1;
  while (length < max_len && count * letters <= 64) {
    count *= letters;
    ++length;
  }
  std::vector<std::vector<LetterId>> words;
  for (long long i = 0; i < count; ++i) {
    std::vector<LetterId> w(length);
    long long rest = i;
    for (int t = length - 1; t >= 0; --t, rest /= letters)
      w[t] = static_cast<LetterId>(rest % letters);
    words.push_back(w);
  }
  std::mt19937_64 rng(35);
  for (int i = 0; i < 4; ++i) {
    std::vector<LetterId> w(max_len);
    for (auto& a : w) a = static_cast<LetterId>(rng() % letters);
    words.push_back(w);
  }
  return words;
}

// circuit_logits equals ForwardPass (float64, the same attention kind) at every position of
// every test word; returns how many positions had a clear argmax in both.
long long check_against_forward(const Network& net, CircuitGranularity granularity) {
  const ForwardPass forward(net, {net.attention, Arithmetic::Float64, 1});
  long long clear = 0;
  for (const auto& word : test_words(static_cast<int>(net.vocabulary.size()) - 1, net.max_len)) {
    const Eigen::MatrixXd ours = circuit_logits(net, word, granularity);
    const Eigen::MatrixXd theirs = forward.run(word);
    REQUIRE(ours.rows() == theirs.rows());
    REQUIRE(ours.cols() == theirs.cols());
    const double size = std::max(1.0, theirs.cwiseAbs().maxCoeff());
    CHECK((ours - theirs).cwiseAbs().maxCoeff() <= 1e-9 * size);
    for (int t = 0; t < theirs.rows(); ++t) {
      const int a = clear_argmax(theirs, t, 1e-6 * size);
      if (a < 0) continue;
      CHECK(clear_argmax(ours, t, 0.0) == a);
      ++clear;
    }
  }
  return clear;
}

}  // namespace

TEST_CASE(
    "circuit: the check's pass equals krc's float64 forward pass and the zoo automaton, in "
    "every attention kind") {
  struct Case {
    const char* family;
    std::optional<int> n;
    Strategy strategy;
    AttentionKind compiled_for;
  };
  int networks = 0;
  for (const Case& c : {Case{"parity", std::nullopt, Strategy::Scan, AttentionKind::Softmax},
                        Case{"parity", std::nullopt, Strategy::Scan, AttentionKind::Hard},
                        Case{"flipflop", 2, Strategy::Kr, AttentionKind::Softmax},
                        Case{"flipflop", 2, Strategy::Kr, AttentionKind::Hard},
                        Case{"cyclic", 3, Strategy::Kr, AttentionKind::Softmax},
                        Case{"gridworld", 4, Strategy::Kr, AttentionKind::Softmax},
                        Case{"parity", std::nullopt, Strategy::OneLayer, AttentionKind::Softmax},
                        Case{"cyclic", 3, Strategy::OneLayer, AttentionKind::Softmax}}) {
    const std::string name = zoo_automaton_name(c.family, c.n);
    CAPTURE(name);
    CAPTURE(to_string(c.strategy));
    CAPTURE(to_string(c.compiled_for));
    CompileOptions options;
    options.strategy = c.strategy;
    options.max_len = 6;
    options.attention = c.compiled_for;
    Network net = compile(zoo_automaton(c.family, c.n), options).network;
    REQUIRE(net.attention == c.compiled_for);
    const nlohmann::json zoo = nlohmann::json::parse(
        test::read_text(test::source_dir() / "automata" / "zoo" / (name + ".json")));
    // As compiled: the pass is right, by the automaton's own table.
    for (const auto& word : test_words(static_cast<int>(net.vocabulary.size()) - 1, net.max_len)) {
      std::vector<std::string> letters;
      for (LetterId a : word) letters.push_back(net.vocabulary.at(a + 1));
      const std::vector<std::string> expected = simulate_zoo_json(zoo, letters);
      const Eigen::MatrixXd logits = circuit_logits(net, word);
      for (int t = 0; t < logits.rows(); ++t) {
        const int got = clear_argmax(logits, t, 0.0);
        REQUIRE(got >= 0);
        CHECK(net.states.at(got) == expected.at(t));
      }
    }
    // Every attention kind, hardmax included (where a counter loses its count, so only the
    // runtime is the oracle): the same logits as krc's forward pass.
    for (AttentionKind kind :
         {AttentionKind::Softmax, AttentionKind::Hard, AttentionKind::Hardmax}) {
      CAPTURE(to_string(kind));
      net.attention = kind;
      CHECK(check_against_forward(net, CircuitGranularity::Head) > 0);
    }
    net.attention = c.compiled_for;
    CHECK(check_against_forward(net, CircuitGranularity::Subspace) > 0);
    ++networks;
  }
  CHECK(networks == 8);
}

TEST_CASE(
    "circuit: under hardmax tied maxima share the weight, so a network right only then passes "
    "the check, and the latest maximum alone or softmax fails it") {
  const Automaton seen_b = test::seen_b_automaton();
  for (HeadKind kind : {HeadKind::Select, HeadKind::Average}) {
    CAPTURE(to_string(kind));
    for (AttentionKind attention :
         {AttentionKind::Hardmax, AttentionKind::Hard, AttentionKind::Softmax}) {
      CAPTURE(to_string(attention));
      const Network net = test::tied_network(attention, kind, 6);
      // The formulas of tied_network.hpp, through the pass: after "b a" the latest maximum
      // alone has lost the b, and softmax's <bos> outweighs it after either word.
      const bool right = attention == AttentionKind::Hardmax;
      nlohmann::json circuit = circuit_json(net, CircuitGranularity::Head);
      CHECK(check_circuit(net, seen_b, circuit) == right);
      CHECK((circuit["check"]["circuit_only"]["wrong"].get<long long>() == 0) == right);
      CHECK(check_against_forward(net, CircuitGranularity::Head) > 0);
      for (const std::vector<LetterId>& word : {std::vector<LetterId>{1, 0}, {0, 1}}) {
        const Eigen::MatrixXd logits = circuit_logits(net, word);
        const bool wrong_here = attention == AttentionKind::Hard && kind == HeadKind::Select
                                    ? word[0] == 1
                                    : attention != AttentionKind::Hardmax;
        CHECK((clear_argmax(logits, 2, 0.0) == 1) != wrong_here);  // "seen" after both
      }
    }
  }
}

TEST_CASE("circuit: mean ablation keeps the position-only edges, needs every component") {
  CHECK(circuit_ablation_from_string("mean") == CircuitAblation::Mean);
  CHECK_THROWS_AS(circuit_ablation_from_string("resample"), std::invalid_argument);
  const Network net = compiled("parity", std::nullopt, Strategy::Scan);
  const Automaton a = zoo_automaton("parity", std::nullopt);
  CircuitCheckOptions options;
  options.max_exhaustive_words = 40;
  options.random_words = 2;
  options.random_length = 6;
  // The tested words: all 32 of length 5 in order (the last letter fastest), then 2 of 6.
  nlohmann::json summary;
  const auto words = circuit_check_words(net, options, &summary);
  REQUIRE(words.size() == 34);
  CHECK(summary["exhaustive_length"] == 5);
  for (int i = 0; i < 32; ++i)
    for (int t = 0; t < 5; ++t) CHECK(words[i][t] == static_cast<LetterId>((i >> (4 - t)) & 1));
  CHECK(words[32].size() == 6);
  CHECK(words[33].size() == 6);

  options.ablation = CircuitAblation::Mean;
  nlohmann::json circuit = circuit_json(net, CircuitGranularity::Head);
  CHECK(check_circuit(net, a, circuit, options));
  const auto& check = circuit["check"];
  CHECK(circuit["ablation"] == "mean");
  CHECK(check["words"] == summary);
  check_units(a, circuit);
  // Every head and MLP block, its outputs replaced by their means, breaks some position.
  CHECK(check["components"]["count"].get<int>() == 6);
  CHECK(check["components"]["necessary"] == check["components"]["count"]);
  // The edges from the input through position codes carry the same value at a position on
  // every word: their mean is that value, so mean ablation needs none of them; zero ablation
  // does (each with its witness against the automaton).
  int position_edges = 0;
  for (const auto& [name, edge] : circuit["edges"].items()) {
    bool position_only = edge["from"] == "input";
    for (const auto& sub : edge["subspaces"])
      position_only &= sub.get<std::string>().rfind("position code", 0) == 0;
    if (!position_only) continue;
    CAPTURE(name);
    ++position_edges;
    CHECK(edge["redundant"] == true);
    REQUIRE(edge.contains("zero_ablation_witness"));
    const auto& w = edge["zero_ablation_witness"];
    const auto states = a.run(letters_of(a, w["word"]));
    CHECK(w["ablated"] != a.state_name(states.at(w["position"].get<std::size_t>())));
  }
  CHECK(position_edges == 6);  // q and k of each of the 3 scan steps
  CHECK(check["zero_only"].size() == 6);
  // A reference set too short for the tested words is refused.
  options.reference_words = {{0, 1}};
  CHECK_THROWS_AS(check_circuit(net, a, circuit, options), std::invalid_argument);
}
