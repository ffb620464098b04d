// The decomposition agrees with SgpDec 1.2.0 on every shared reference automaton (the zoo in
// tests/reference, and the 221 random and structured automata in tests/reference/random):
// number of levels, image count, and per level the multiset of (tiles, group order,
// composition factor orders), with GAP's names for the groups krc names (the others print as
// "group of order k").
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "krc/automata/automaton_json.hpp"
#include "krc/decompose/holonomy.hpp"
#include "test_support.hpp"

using krc::HolonomyDecomposition;
namespace fs = std::filesystem;

namespace {

// A directory with automata/NAME.json and sgpdec_holonomy.json (NAME -> SgpDec's result).
struct ReferenceSet {
  fs::path dir;

  nlohmann::json results() const {
    return nlohmann::json::parse(krc::test::read_text(dir / "sgpdec_holonomy.json"));
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir / "automata"))
      if (entry.path().extension() == ".json") out.push_back(entry.path().stem().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  krc::Automaton automaton(const std::string& name) const {
    auto path = dir / "automata" / (name + ".json");
    return krc::automaton_from_json(nlohmann::json::parse(krc::test::read_text(path)),
                                    path.string());
  }
};

ReferenceSet zoo() { return {krc::test::reference_dir()}; }
ReferenceSet random_set() { return {krc::test::reference_dir() / "random"}; }

krc::DecomposeOptions skeleton_only() {
  krc::DecomposeOptions options;
  options.build_tables = false;
  return options;
}

using Component = std::tuple<int, std::uint64_t, std::vector<std::uint64_t>, std::string>;

void check_names_match(const ReferenceSet& set) {
  const auto results = set.results();
  std::vector<std::string> names;
  for (auto& [name, _] : results.items()) names.push_back(name);
  std::sort(names.begin(), names.end());
  CHECK(names == set.names());
}

void check_against_sgpdec(const ReferenceSet& set) {
  const auto ref = set.results();
  for (const auto& name : set.names()) {
    CAPTURE(name);
    const auto& expected = ref.at(name);
    HolonomyDecomposition h = HolonomyDecomposition::compute(set.automaton(name), skeleton_only());
    CHECK(h.image_count() == expected.at("images").get<std::size_t>());
    REQUIRE(h.level_count() == expected.at("levels").get<int>());
    for (int d = 0; d < h.level_count(); ++d) {
      CAPTURE(d + 1);
      std::multiset<Component> ours, theirs, named;
      for (const auto& slot : h.level(d).slots) {
        ours.emplace(static_cast<int>(slot.tiles.size()), slot.group.order, slot.group.factors, "");
        if (slot.group.name.rfind("group of order", 0) != 0)
          named.emplace(static_cast<int>(slot.tiles.size()), slot.group.order, slot.group.factors,
                        slot.group.name);
      }
      std::multiset<Component> theirs_named;
      for (const auto& c : expected.at("components")) {
        if (c.at("level").get<int>() != d + 1) continue;
        Component component{c.at("tiles").get<int>(), c.at("order").get<std::uint64_t>(),
                            c.at("factors").get<std::vector<std::uint64_t>>(), ""};
        theirs.insert(component);
        std::get<3>(component) = c.at("name").get<std::string>();
        theirs_named.insert(component);
      }
      CHECK(ours == theirs);
      // Where krc names a group (GAP's names for the families it knows), GAP agrees.
      CHECK(std::includes(theirs_named.begin(), theirs_named.end(), named.begin(), named.end()));
      for (const auto& slot : h.level(d).slots) {
        bool prime_factors_only = std::all_of(slot.group.factors.begin(), slot.group.factors.end(),
                                              [](std::uint64_t f) { return f < 60; });
        CHECK(slot.group.solvable == prime_factors_only);
        CHECK(slot.group.exact);
      }
    }
  }
}

}  // namespace

TEST_CASE("every reference automaton has a SgpDec result and vice versa") {
  check_names_match(zoo());
  CHECK(zoo().names() == krc::test::reference_automaton_names());
  check_names_match(random_set());
  CHECK(random_set().names().size() == 221);
}

TEST_CASE("levels, images and components agree with SgpDec") { check_against_sgpdec(zoo()); }

TEST_CASE("random and structured automata: levels, images and components agree with SgpDec") {
  check_against_sgpdec(random_set());
}

TEST_CASE("exactly alternating_5, symmetric_5 and full_transformations_5 are not solvable") {
  const std::set<std::string> non_solvable{"alternating_5", "symmetric_5",
                                           "full_transformations_5"};
  for (const auto& name : zoo().names()) {
    CAPTURE(name);
    HolonomyDecomposition h =
        HolonomyDecomposition::compute(zoo().automaton(name), skeleton_only());
    CHECK(h.solvable() == (non_solvable.count(name) == 0));
  }
}
