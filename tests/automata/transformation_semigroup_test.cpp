#include "krc/automata/transformation_semigroup.hpp"

#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/interrupt.hpp"
#include "test_support.hpp"

using namespace krc;
using ElementId = TransformationSemigroup::ElementId;

namespace {

Automaton reference_automaton(const std::string& name) {
  auto doc =
      nlohmann::json::parse(test::read_text(test::reference_dir() / "automata" / (name + ".json")));
  return automaton_from_json(doc, name);
}

Transformation compose(const Transformation& first, const Transformation& then) {
  Transformation r(first.size());
  for (std::size_t q = 0; q < first.size(); ++q) r[q] = then[first[q]];
  return r;
}

Transformation identity_map(std::size_t n) {
  Transformation id(n);
  for (StateId q = 0; q < n; ++q) id[q] = q;
  return id;
}

// The oracle: closure of the letters under right multiplication, by sets of vectors.
std::set<Transformation> brute_force_semigroup(const Automaton& a) {
  std::set<Transformation> elements;
  std::vector<Transformation> frontier;
  for (LetterId l = 0; l < a.letter_count(); ++l)
    if (elements.insert(a.letter_action(l)).second) frontier.push_back(a.letter_action(l));
  while (!frontier.empty()) {
    std::vector<Transformation> next;
    for (const auto& x : frontier)
      for (LetterId l = 0; l < a.letter_count(); ++l) {
        auto y = compose(x, a.letter_action(l));
        if (elements.insert(y).second) next.push_back(y);
      }
    frontier.swap(next);
  }
  return elements;
}

// Aperiodic by the definition: the powers x, x^2, ... become periodic with period 1.
bool brute_force_aperiodic(const std::set<Transformation>& elements) {
  for (const auto& x : elements) {
    std::map<Transformation, int> first_seen;
    Transformation power = x;
    for (int k = 1;; ++k) {
      auto [it, inserted] = first_seen.emplace(power, k);
      if (!inserted) {
        if (k - it->second != 1) return false;
        break;
      }
      power = compose(power, x);
    }
  }
  return true;
}

bool is_permutation_map(const Transformation& t) {
  std::set<StateId> image(t.begin(), t.end());
  return image.size() == t.size();
}

Transformation word_action(const Automaton& a, const std::vector<LetterId>& word) {
  Transformation t = identity_map(a.state_count());
  for (LetterId l : word) t = compose(t, a.letter_action(l));
  return t;
}

}  // namespace

TEST_CASE("semigroup sizes of the reference automata equal SgpDec's") {
  auto sgpdec =
      nlohmann::json::parse(test::read_text(test::reference_dir() / "sgpdec_holonomy.json"));
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    REQUIRE(sgpdec.contains(name));
    auto s = TransformationSemigroup::generate(reference_automaton(name));
    CHECK(s.size() == sgpdec[name]["semigroup_size"].get<std::size_t>());
    CHECK(s.semigroup_size() == s.size());
    // The monoid differs by the identity exactly when no non-empty word acts as the identity.
    auto m = TransformationSemigroup::generate(reference_automaton(name), true);
    CHECK(m.semigroup_size() == s.size());
    CHECK(m.monoid_size() == s.monoid_size());
    CHECK(m.size() == s.size() + (s.identity() ? 0 : 1));
  }
}

TEST_CASE("enumeration agrees with a brute-force closure on random automata") {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 300; ++trial) {
    Automaton a = test::random_automaton(rng, 6, 3);
    CAPTURE(a.transitions());
    auto oracle = brute_force_semigroup(a);
    auto s = TransformationSemigroup::generate(a);
    REQUIRE(s.size() == oracle.size());
    for (ElementId i = 0; i < s.size(); ++i) CHECK(oracle.count(s.element(i)) == 1);
    bool identity_in_s = oracle.count(identity_map(a.state_count())) == 1;
    CHECK(s.identity().has_value() == identity_in_s);
    CHECK(s.identity_in_semigroup() == identity_in_s);

    auto m = TransformationSemigroup::generate(a, true);
    CHECK(m.size() == oracle.size() + (identity_in_s ? 0 : 1));
    CHECK(m.element(0) == identity_map(a.state_count()));
    CHECK(m.identity() == ElementId{0});
    CHECK(m.semigroup_size() == oracle.size());
    CHECK(m.identity_in_semigroup() == identity_in_s);
  }
}

TEST_CASE("aperiodicity agrees with the definition on random automata") {
  std::mt19937_64 rng(7);
  int aperiodic = 0, periodic = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Automaton a = test::random_automaton(rng, 5, 2);
    auto oracle = brute_force_semigroup(a);
    bool expected = brute_force_aperiodic(oracle);
    CAPTURE(a.transitions());
    CHECK(TransformationSemigroup::generate(a).is_aperiodic() == expected);
    CHECK(TransformationSemigroup::generate(a, true).is_aperiodic() == expected);
    (expected ? aperiodic : periodic) += 1;
  }
  // Both answers must have been exercised for the comparison to mean anything.
  CHECK(aperiodic > 20);
  CHECK(periodic > 20);
}

TEST_CASE("aperiodicity of known automata") {
  // Groups are not aperiodic; flip-flops and the clamped walk are (their letters are idempotent
  // or shift towards a wall).
  CHECK_FALSE(TransformationSemigroup::generate(reference_automaton("parity")).is_aperiodic());
  CHECK_FALSE(TransformationSemigroup::generate(reference_automaton("symmetric_3")).is_aperiodic());
  CHECK(TransformationSemigroup::generate(reference_automaton("flipflop_3")).is_aperiodic());
  CHECK(TransformationSemigroup::generate(reference_automaton("gridworld_9")).is_aperiodic());
  CHECK(TransformationSemigroup::generate(reference_automaton("abab")).is_aperiodic() ==
        brute_force_aperiodic(brute_force_semigroup(reference_automaton("abab"))));
}

TEST_CASE("multiplication composes transformations and is associative") {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    Automaton a = test::random_automaton(rng, 5, 3);
    for (bool with_identity : {false, true}) {
      auto s = TransformationSemigroup::generate(a, with_identity);
      std::uniform_int_distribution<ElementId> pick(0, static_cast<ElementId>(s.size() - 1));
      for (int k = 0; k < 60; ++k) {
        ElementId x = pick(rng), y = pick(rng), z = pick(rng);
        ElementId xy = s.multiply(x, y);
        CHECK(s.element(xy) == compose(s.element(x), s.element(y)));
        CHECK(s.multiply(xy, z) == s.multiply(x, s.multiply(y, z)));
      }
    }
  }
}

TEST_CASE("a row of the multiplication table composes the transformations") {
  // The oracle is composition itself, not multiply(): the row walks the BFS tree instead.
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 40; ++trial) {
    Automaton a = test::random_automaton(rng, 5, 3);
    for (bool with_identity : {false, true}) {
      auto s = TransformationSemigroup::generate(a, with_identity);
      for (ElementId x = 0; x < s.size(); ++x) {
        const auto row = s.multiply_row(x);
        REQUIRE(row.size() == s.size());
        for (ElementId y = 0; y < s.size(); ++y)
          CHECK(s.element(row[y]) == compose(s.element(x), s.element(y)));
      }
    }
  }
}

TEST_CASE("the Cayley graph, letter elements and shortest words agree with running the automaton") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    Automaton a = test::random_automaton(rng, 6, 3);
    for (bool with_identity : {false, true}) {
      auto s = TransformationSemigroup::generate(a, with_identity);
      for (LetterId l = 0; l < a.letter_count(); ++l)
        CHECK(s.element(s.letter_element(l)) == a.letter_action(l));
      // Breadth-first order: word lengths never decrease with the index.
      std::size_t previous_length = 0;
      for (ElementId i = 0; i < s.size(); ++i) {
        auto word = s.shortest_word(i);
        CHECK(word_action(a, word) == s.element(i));
        CHECK(word.size() >= previous_length);
        previous_length = word.size();
        CHECK(word.empty() == (with_identity && i == 0));
        for (LetterId l = 0; l < a.letter_count(); ++l)
          CHECK(s.element(s.right_multiply(i, l)) == compose(s.element(i), a.letter_action(l)));
      }
    }
  }
}

TEST_CASE("shortest words are shortest") {
  // Independent check by breadth-first search over words on a small automaton.
  Automaton a = reference_automaton("full_transformations_3");
  auto s = TransformationSemigroup::generate(a);
  std::map<Transformation, std::size_t> shortest;
  std::vector<std::vector<LetterId>> layer{{}};
  for (std::size_t length = 1; length <= 12; ++length) {
    std::vector<std::vector<LetterId>> next;
    for (const auto& w : layer)
      for (LetterId l = 0; l < a.letter_count(); ++l) {
        auto v = w;
        v.push_back(l);
        if (shortest.emplace(word_action(a, v), length).second) next.push_back(v);
      }
    layer.swap(next);
  }
  REQUIRE(shortest.size() == s.size());
  for (ElementId i = 0; i < s.size(); ++i)
    CHECK(s.shortest_word(i).size() == shortest.at(s.element(i)));
}

TEST_CASE("index_of finds every element and nothing else") {
  Automaton a = reference_automaton("full_transformations_4");
  auto s = TransformationSemigroup::generate(a);
  REQUIRE(s.size() == 256);  // all 4^4 maps
  for (ElementId i = 0; i < s.size(); ++i) CHECK(s.index_of(s.element(i)) == i);
  CHECK_FALSE(s.index_of(Transformation{0, 1, 2}).has_value());     // wrong degree
  CHECK_FALSE(s.index_of(Transformation{0, 1, 2, 4}).has_value());  // out of range
  auto g = TransformationSemigroup::generate(reference_automaton("cyclic_4"));
  CHECK_FALSE(g.index_of(Transformation{0, 0, 0, 0}).has_value());  // not in Z_4
}

TEST_CASE("group of units, groups, ranks and idempotents against brute force") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 150; ++trial) {
    Automaton a = test::random_automaton(rng, 5, 3);
    auto oracle = brute_force_semigroup(a);
    std::size_t permutations = 0;
    for (const auto& x : oracle) permutations += is_permutation_map(x);
    auto s = TransformationSemigroup::generate(a);
    CHECK(s.group_of_units_order() == permutations);
    CHECK(s.is_group() == (permutations == oracle.size()));
    auto m = TransformationSemigroup::generate(a, true);
    CHECK(m.group_of_units_order() ==
          permutations + (oracle.count(identity_map(a.state_count())) ? 0 : 1));
    for (ElementId i = 0; i < s.size(); ++i) {
      auto x = s.element(i);
      CHECK(s.rank(i) == std::set<StateId>(x.begin(), x.end()).size());
      CHECK(s.is_idempotent(i) == (compose(x, x) == x));
      CHECK(s.is_permutation(i) == is_permutation_map(x));
    }
  }
}

TEST_CASE("groups of the zoo are groups") {
  for (const char* name :
       {"parity", "cyclic_5", "dihedral_4", "quaternion", "symmetric_4", "alternating_5"}) {
    CAPTURE(name);
    auto s = TransformationSemigroup::generate(reference_automaton(name));
    CHECK(s.is_group());
    CHECK(s.group_of_units_order() == s.size());
  }
  auto t = TransformationSemigroup::generate(reference_automaton("full_transformations_4"));
  CHECK_FALSE(t.is_group());
  CHECK(t.group_of_units_order() == 24);  // S_4 inside T_4
}

TEST_CASE("the element limit raises a LimitError naming the automaton") {
  Automaton a = reference_automaton("full_transformations_5");  // 3125 elements
  CHECK_NOTHROW(TransformationSemigroup::generate(a, false, 3125));
  try {
    TransformationSemigroup::generate(a, false, 3124);
    FAIL("no LimitError");
  } catch (const LimitError& e) {
    std::string message = e.what();
    CHECK(message.find("'full_transformations_5'") != std::string::npos);
    CHECK(message.find("more than 3,124 elements") != std::string::npos);
  }
  // The monoid of T_5 is T_5 itself: the identity is a product of letters.
  CHECK_NOTHROW(TransformationSemigroup::generate(a, true, 3125));
  // Z_5's letter "0" is the identity, so S is already a monoid; the monoid of parity too.
  CHECK_THROWS_AS(TransformationSemigroup::generate(reference_automaton("cyclic_5"), false, 4),
                  LimitError);
}

TEST_CASE("the memory budget raises a LimitError too") {
  Automaton a = reference_automaton("full_transformations_5");
  CHECK_THROWS_AS(TransformationSemigroup::generate(a, false, kDefaultMaxSemigroupElements, 4096),
                  LimitError);
}

TEST_CASE("wide automata store their elements in wider integers") {
  // 300 states need 16-bit entries: a rotation and a reset give Z_300 and the 300 constants.
  {
    const StateId n = 300;
    std::vector<std::string> states;
    for (StateId q = 0; q < n; ++q) states.push_back(std::to_string(q));
    std::vector<std::vector<StateId>> delta(2, std::vector<StateId>(n, 0));
    for (StateId q = 0; q < n; ++q) delta[0][q] = (q + 1) % n;
    Automaton a("wide", states, {"c", "r"}, delta, 0);
    auto s = TransformationSemigroup::generate(a, false, 1000);
    CHECK(s.size() == 2 * std::size_t{n});
    CHECK(s.image(s.letter_element(0), n - 1) == 0);
    CHECK_FALSE(s.is_aperiodic());
    CHECK(s.group_of_units_order() == n);
  }
  // 70000 states need 32-bit entries: a swap of 0 and 1 and a reset to 0 give
  // {swap, reset, identity, reset to 1}.
  {
    const StateId n = 70000;
    std::vector<std::string> states;
    for (StateId q = 0; q < n; ++q) states.push_back(std::to_string(q));
    std::vector<std::vector<StateId>> delta(2, std::vector<StateId>(n, 0));
    for (StateId q = 0; q < n; ++q) delta[0][q] = q < 2 ? 1 - q : q;
    Automaton a("wider", states, {"s", "r"}, delta, 0);
    auto s = TransformationSemigroup::generate(a);
    CHECK(s.size() == 4);
    Transformation reset_to_1(n, 1);
    auto found = s.index_of(reset_to_1);
    REQUIRE(found.has_value());
    CHECK(s.shortest_word(*found) == std::vector<LetterId>{1, 0});
    CHECK(s.image(s.letter_element(0), n - 1) == n - 1);
    CHECK(s.group_of_units_order() == 2);
  }
}

TEST_CASE("an interrupt stops the closure, and the next run after clearing it is whole") {
  // interrupt.hpp: the closure checks the flag at every element; Ctrl-C's handlers set it.
  const Automaton a = reference_automaton("symmetric_5");
  request_interrupt();
  CHECK_THROWS_AS(TransformationSemigroup::generate(a), Interrupted);
  clear_interrupt();
  CHECK(TransformationSemigroup::generate(a).size() == 120);  // |S_5|
}
