#include "krc/automata/zoo.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/transformation_semigroup.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// "cyclic_5" -> ("cyclic", 5); "parity" -> ("parity", none). Families are matched against the
// zoo's list so that names with underscores (full_transformations) split right.
std::pair<std::string, std::optional<int>> split_reference_name(const std::string& stem) {
  for (const auto& f : zoo_families()) {
    if (!f.has_parameter && stem == f.name) return {f.name, std::nullopt};
    if (f.has_parameter && stem.rfind(f.name + "_", 0) == 0)
      return {f.name, std::stoi(stem.substr(f.name.size() + 1))};
  }
  FAIL("reference automaton " << stem << " belongs to no zoo family");
  return {};
}

Automaton reference_automaton(const std::string& stem) {
  auto doc =
      nlohmann::json::parse(test::read_text(test::reference_dir() / "automata" / (stem + ".json")));
  return automaton_from_json(doc, stem);
}

std::size_t factorial(std::size_t n) { return n <= 1 ? 1 : n * factorial(n - 1); }

}  // namespace

TEST_CASE("every reference automaton is a zoo automaton, identical to the file") {
  auto names = test::reference_automaton_names();
  REQUIRE(names.size() == 23);
  for (const auto& stem : names) {
    CAPTURE(stem);
    auto [family, n] = split_reference_name(stem);
    Automaton zoo = zoo_automaton(family, n);
    Automaton reference = reference_automaton(stem);
    CHECK(zoo.name() == reference.name());
    CHECK(zoo.states() == reference.states());
    CHECK(zoo.letters() == reference.letters());
    CHECK(zoo.transitions() == reference.transitions());
    CHECK(zoo.initial() == reference.initial());
    CHECK(zoo == reference);
    CHECK(zoo_automaton_name(family, n) == stem);
  }
}

TEST_CASE("zoo automata print as the reference files' text") {
  for (const auto& stem : test::reference_automaton_names()) {
    CAPTURE(stem);
    auto [family, n] = split_reference_name(stem);
    std::string reference = test::read_text(test::reference_dir() / "automata" / (stem + ".json"));
    // The reference files lack the final newline.
    CHECK(automaton_to_json_text(zoo_automaton(family, n)) == reference + "\n");
  }
}

TEST_CASE("the carried example files under automata/zoo are the zoo's automata") {
  auto dir = test::source_dir() / "automata" / "zoo";
  std::size_t count = 0;
  for (const auto& stem : test::reference_automaton_names()) {
    CAPTURE(stem);
    auto path = dir / (stem + ".json");
    REQUIRE(std::filesystem::exists(path));
    auto [family, n] = split_reference_name(stem);
    auto doc = nlohmann::json::parse(test::read_text(path));
    CHECK(automaton_from_json(doc, path.string()) == zoo_automaton(family, n));
    ++count;
  }
  CHECK(count == 23);
}

TEST_CASE("zoo families: the group and semigroup each family is named after") {
  // Sizes from group theory, not from the code: |Z_n| = n, |D_2n| = 2n, |S_n| = n!,
  // |A_n| = n!/2, |Q8| = 8, |T_n| = n^n; the clamped walk and the flip-flop are aperiodic.
  for (int n : {2, 3, 9, 12}) {
    auto s = TransformationSemigroup::generate(zoo_automaton("cyclic", n));
    CHECK(s.size() == std::size_t(n));
    CHECK(s.is_group());
    auto d = TransformationSemigroup::generate(zoo_automaton("dihedral", n));
    CHECK(d.size() == std::size_t(2 * n));
    CHECK(d.is_group());
  }
  for (int n : {2, 3, 4, 5, 6}) {
    CAPTURE(n);
    auto s = TransformationSemigroup::generate(zoo_automaton("symmetric", n));
    CHECK(s.size() == factorial(n));
    CHECK(s.is_group());
    CHECK(zoo_automaton("symmetric", n).state_count() == factorial(n));
    if (n >= 3) {
      auto a = TransformationSemigroup::generate(zoo_automaton("alternating", n));
      CHECK(a.size() == factorial(n) / 2);
      CHECK(a.is_group());
      CHECK(zoo_automaton("alternating", n).state_count() == factorial(n) / 2);
    }
    std::size_t power = 1;
    for (int i = 0; i < n; ++i) power *= n;
    CHECK(TransformationSemigroup::generate(zoo_automaton("full_transformations", n)).size() ==
          power);
  }
  auto q = TransformationSemigroup::generate(zoo_automaton("quaternion"));
  CHECK(q.size() == 8);
  CHECK(q.is_group());
  for (int n : {2, 5, 17}) {
    CHECK(TransformationSemigroup::generate(zoo_automaton("flipflop", n)).is_aperiodic());
    CHECK(TransformationSemigroup::generate(zoo_automaton("gridworld", n)).is_aperiodic());
  }
}

TEST_CASE("zoo: the regular actions multiply permutations") {
  // In symmetric_n a state is a permutation p (as a string); reading a letter whose action
  // rearranges positions must give a permutation again, and distinct states stay distinct.
  Automaton s5 = zoo_automaton("symmetric", 5);
  for (LetterId a = 0; a < s5.letter_count(); ++a) {
    std::set<StateId> images(s5.letter_action(a).begin(), s5.letter_action(a).end());
    CHECK(images.size() == s5.state_count());
  }
  // Reading "shift" n times, or "swap" twice, returns every state to itself.
  for (StateId q = 0; q < s5.state_count(); ++q) {
    std::vector<LetterId> shifts(5, 1), swaps(2, 2);
    CHECK(s5.run(shifts, q).back() == q);
    CHECK(s5.run(swaps, q).back() == q);
  }
  // Every state of alternating_n is an even permutation.
  Automaton a5 = zoo_automaton("alternating", 5);
  for (const auto& name : a5.states()) {
    int inversions = 0;
    for (std::size_t i = 0; i < name.size(); ++i)
      for (std::size_t j = i + 1; j < name.size(); ++j) inversions += name[i] > name[j];
    CHECK(inversions % 2 == 0);
  }
}

TEST_CASE("zoo: every family builds at its minimum, default and maximum") {
  for (const auto& f : zoo_families()) {
    CAPTURE(f.name);
    CHECK_FALSE(f.description.empty());
    if (!f.has_parameter) {
      CHECK(zoo_automaton(f.name).name() == f.name);
      continue;
    }
    CHECK_FALSE(f.parameter.empty());
    CHECK(f.min_n <= f.default_n);
    CHECK(f.default_n <= f.max_n);
    // The maximum of symmetric (720 states) and the rest stay cheap to build.
    for (int n : {f.min_n, f.default_n, f.max_n})
      CHECK(zoo_automaton(f.name, n).name() == f.name + "_" + std::to_string(n));
    CHECK(zoo_automaton(f.name) == zoo_automaton(f.name, f.default_n));
  }
}

TEST_CASE("zoo: an unknown family is an InputError naming the zoo and the family") {
  try {
    zoo_automaton("pairty");
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "zoo");
    CHECK(e.place() == "pairty");
    CHECK(std::string(e.what()).find("parity") != std::string::npos);  // lists the families
  }
}

TEST_CASE("zoo: n out of range is an InputError") {
  for (int n : {1, 7, -3}) {
    CAPTURE(n);
    try {
      zoo_automaton("symmetric", n);
      FAIL("no InputError");
    } catch (const InputError& e) {
      CHECK(e.file() == "zoo");
      CHECK(e.place() == "symmetric");
      CHECK(e.problem().find(std::to_string(n)) != std::string::npos);
    }
  }
  CHECK_THROWS_AS(zoo_automaton("cyclic", 0), InputError);
  CHECK_THROWS_AS(zoo_automaton("full_transformations", 11), InputError);
  CHECK_THROWS_AS(zoo_automaton_name("gridworld", 100000), InputError);
}

TEST_CASE("zoo: a parameter given to a family without one is an InputError") {
  CHECK_THROWS_AS(zoo_automaton("parity", 3), InputError);
  CHECK_THROWS_AS(zoo_automaton("quaternion", 8), InputError);
}
