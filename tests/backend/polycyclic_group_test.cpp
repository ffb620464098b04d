#include "primitives/polycyclic_group.hpp"

#include <doctest/doctest.h>

#include <numeric>

#include "krc/automata/automaton_json.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// The letters of a reference permutation automaton, as permutations of its states.
std::vector<Permutation> letter_permutations(const std::string& name) {
  Automaton a = automaton_from_json(
      nlohmann::json::parse(test::read_text(test::reference_dir() / "automata" / (name + ".json"))),
      name);
  std::vector<Permutation> gens;
  for (LetterId l = 0; l < a.letter_count(); ++l)
    gens.emplace_back(a.letter_action(l).begin(), a.letter_action(l).end());
  return gens;
}

Permutation compose(const Permutation& first, const Permutation& second) {
  Permutation out(first.size());
  for (std::size_t i = 0; i < first.size(); ++i) out[i] = second[first[i]];
  return out;
}

}  // namespace

TEST_CASE("counters driven by the increments track the running product of solvable groups") {
  // Regular actions: the group order is the number of states.
  for (auto [name, order] : std::vector<std::pair<std::string, int>>{{"parity", 2},
                                                                     {"cyclic_6", 6},
                                                                     {"dihedral_4", 8},
                                                                     {"quaternion", 8},
                                                                     {"symmetric_3", 6},
                                                                     {"alternating_4", 12},
                                                                     {"symmetric_4", 24}}) {
    CAPTURE(name);
    auto gens = letter_permutations(name);
    auto g = PolycyclicGroup::build(gens, static_cast<int>(gens[0].size()), 1000);
    REQUIRE(g.has_value());
    CHECK(g->order() == order);
    CHECK(std::accumulate(g->primes().begin(), g->primes().end(), 1, std::multiplies<>()) == order);

    std::mt19937_64 rng(3);
    for (int trial = 0; trial < 50; ++trial) {
      Permutation running(gens[0].size());
      std::iota(running.begin(), running.end(), 0);
      std::vector<int> e(g->series_length(), 0);
      for (int step = 0; step < 40; ++step) {
        const auto& factor = gens[rng() % gens.size()];
        running = compose(running, factor);
        int pi = *g->index_of(factor);
        std::vector<int> next = e;
        for (int i = 0; i < g->series_length(); ++i)
          next[i] = (e[i] + g->increment(i, pi, e)) % g->prime(i);
        e = next;
        REQUIRE(g->element(g->from_exponents(e)) == running);
      }
    }
  }
}

TEST_CASE("exponents are unique and round-trip") {
  auto gens = letter_permutations("symmetric_4");
  auto g = PolycyclicGroup::build(gens, 24, 1000);
  REQUIRE(g.has_value());
  for (int y = 0; y < g->order(); ++y) CHECK(g->from_exponents(g->exponents(y)) == y);
}

TEST_CASE("non-solvable and oversized groups are refused") {
  auto a5 = letter_permutations("alternating_5");
  CHECK_FALSE(PolycyclicGroup::build(a5, 60, 1000).has_value());
  auto s4 = letter_permutations("symmetric_4");
  CHECK_FALSE(PolycyclicGroup::build(s4, 24, 10).has_value());
}
