#include "krc/automata/automaton_analysis.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/zoo.hpp"
#include "test_support.hpp"

using namespace krc;

TEST_CASE("analysis of the reference automata: sizes from SgpDec") {
  auto sgpdec =
      nlohmann::json::parse(test::read_text(test::reference_dir() / "sgpdec_holonomy.json"));
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    auto doc = nlohmann::json::parse(
        test::read_text(test::reference_dir() / "automata" / (name + ".json")));
    Automaton a = automaton_from_json(doc, name);
    auto info = analyze_automaton(a);
    CHECK(info["name"] == name);
    CHECK(info["states"] == doc["states"].size());
    CHECK(info["letters"] == doc["alphabet"].size());
    CHECK(info["initial"] == doc["initial"]);
    CHECK(info["semigroup"]["size"] == sgpdec[name]["semigroup_size"]);
    auto monoid = info["semigroup"]["monoid_size"].get<std::size_t>();
    auto size = info["semigroup"]["size"].get<std::size_t>();
    CHECK((monoid == size || monoid == size + 1));
    // SgpDec's holonomy groups are all trivial exactly when the semigroup is aperiodic.
    bool all_trivial = true;
    for (const auto& c : sgpdec[name]["components"]) all_trivial = all_trivial && c["order"] == 1;
    CHECK(info["semigroup"]["aperiodic"] == all_trivial);
  }
}

TEST_CASE("analysis fields of known automata") {
  auto t4 = analyze_automaton(zoo_automaton("full_transformations", 4));
  CHECK(t4["semigroup"]["size"] == 256);
  CHECK(t4["semigroup"]["monoid_size"] == 256);  // the identity is a product of c's
  CHECK(t4["semigroup"]["group_of_units_order"] == 24);
  CHECK(t4["semigroup"]["is_group"] == false);
  CHECK(t4["reachable_states"] == 4);
  CHECK(t4["strongly_connected_components"] == 1);

  // gridworld: the letters are not permutations, so the identity is not a product; the
  // monoid adds it, and it is the only unit.
  auto grid = analyze_automaton(zoo_automaton("gridworld", 4));
  CHECK(grid["semigroup"]["monoid_size"] == grid["semigroup"]["size"].get<int>() + 1);
  CHECK(grid["semigroup"]["group_of_units_order"] == 1);
  CHECK(grid["semigroup"]["aperiodic"] == true);

  auto abab = analyze_automaton(zoo_automaton("abab"));
  CHECK(abab["reachable_states"] == 5);
  CHECK(abab["strongly_connected_components"] == 2);
  CHECK(abab["sink_components"] == 1);
}

TEST_CASE("analysis over the element limit: size unknown, what the letters decide is filled") {
  // T_5 has 3125 elements; its letter c is a 5-cycle (not aperiodic), e is not a permutation.
  auto t5 = analyze_automaton(zoo_automaton("full_transformations", 5), 100);
  CHECK(t5["semigroup"]["size"].is_null());
  CHECK(t5["semigroup"]["monoid_size"].is_null());
  CHECK(t5["semigroup"]["group_of_units_order"].is_null());
  CHECK(t5["semigroup"]["aperiodic"] == false);
  CHECK(t5["semigroup"]["is_group"] == false);
  CHECK(t5["semigroup"]["element_limit"] == 100);
  // S_5's letters are permutations: a group, whatever its size.
  auto s5 = analyze_automaton(zoo_automaton("symmetric", 5), 10);
  CHECK(s5["semigroup"]["is_group"] == true);
  CHECK(s5["semigroup"]["aperiodic"] == false);
  // gridworld's letters have no cycle longer than 1, so aperiodicity stays unknown.
  auto grid = analyze_automaton(zoo_automaton("gridworld", 9), 5);
  CHECK(grid["semigroup"]["aperiodic"].is_null());
  CHECK(grid["semigroup"]["is_group"] == false);
}
