// The decomposition agrees with SgpDec 1.2.0 on every shared reference automaton: number of
// levels, image count, and per level the multiset of (tiles, group order, composition factor
// orders), with GAP's names for the groups.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "krc/automaton_json.hpp"
#include "krc/holonomy.hpp"
#include "test_support.hpp"

using krc::HolonomyDecomposition;

namespace {

nlohmann::json reference() {
  return nlohmann::json::parse(
      krc::test::read_text(krc::test::reference_dir() / "sgpdec_holonomy.json"));
}

krc::Automaton reference_automaton(const std::string& name) {
  auto path = krc::test::reference_dir() / "automata" / (name + ".json");
  return krc::automaton_from_json(nlohmann::json::parse(krc::test::read_text(path)), path.string());
}

krc::DecomposeOptions skeleton_only() {
  krc::DecomposeOptions options;
  options.build_tables = false;
  return options;
}

using Component = std::tuple<int, std::uint64_t, std::vector<std::uint64_t>, std::string>;

}  // namespace

TEST_CASE("every reference automaton has a SgpDec result and vice versa") {
  auto ref = reference();
  std::vector<std::string> names;
  for (auto& [name, _] : ref.items()) names.push_back(name);
  std::sort(names.begin(), names.end());
  CHECK(names == krc::test::reference_automaton_names());
}

TEST_CASE("levels, images and components agree with SgpDec") {
  auto ref = reference();
  for (const auto& name : krc::test::reference_automaton_names()) {
    CAPTURE(name);
    const auto& expected = ref.at(name);
    HolonomyDecomposition h =
        HolonomyDecomposition::compute(reference_automaton(name), skeleton_only());
    CHECK(h.image_count() == expected.at("images").get<std::size_t>());
    REQUIRE(h.level_count() == expected.at("levels").get<int>());
    for (int d = 0; d < h.level_count(); ++d) {
      CAPTURE(d + 1);
      std::multiset<Component> ours, theirs;
      for (const auto& slot : h.level(d).slots)
        ours.emplace(static_cast<int>(slot.tiles.size()), slot.group.order, slot.group.factors,
                     slot.group.name);
      for (const auto& c : expected.at("components"))
        if (c.at("level").get<int>() == d + 1)
          theirs.emplace(c.at("tiles").get<int>(), c.at("order").get<std::uint64_t>(),
                         c.at("factors").get<std::vector<std::uint64_t>>(),
                         c.at("name").get<std::string>());
      CHECK(ours == theirs);
      for (const auto& slot : h.level(d).slots) {
        bool prime_factors_only = std::all_of(slot.group.factors.begin(), slot.group.factors.end(),
                                              [](std::uint64_t f) { return f < 60; });
        CHECK(slot.group.solvable == prime_factors_only);
        CHECK(slot.group.exact);
      }
    }
  }
}

TEST_CASE("exactly alternating_5, symmetric_5 and full_transformations_5 are not solvable") {
  const std::set<std::string> non_solvable{"alternating_5", "symmetric_5",
                                           "full_transformations_5"};
  for (const auto& name : krc::test::reference_automaton_names()) {
    CAPTURE(name);
    HolonomyDecomposition h =
        HolonomyDecomposition::compute(reference_automaton(name), skeleton_only());
    CHECK(h.solvable() == (non_solvable.count(name) == 0));
  }
}
