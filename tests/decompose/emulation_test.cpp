// The emulation property, the oracle of the whole construction: decoding the cascade's
// action of a word on the coordinates of q gives q·w (the automaton run directly).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "krc/automata/automaton_json.hpp"
#include "krc/decompose/holonomy.hpp"
#include "test_support.hpp"

using krc::Coordinates;
using krc::HolonomyDecomposition;
using krc::LetterId;
using krc::StateId;

namespace {

krc::Automaton reference_automaton(const std::string& name) {
  auto path = krc::test::reference_dir() / "automata" / (name + ".json");
  return krc::automaton_from_json(nlohmann::json::parse(krc::test::read_text(path)), path.string());
}

// The zoo, the 221 random and structured automata SgpDec was run on, and 1000 more.
std::vector<krc::Automaton> emulation_automata() {
  std::vector<krc::Automaton> automata;
  for (const auto& name : krc::test::reference_automaton_names())
    automata.push_back(reference_automaton(name));
  for (const auto& entry :
       std::filesystem::directory_iterator(krc::test::reference_dir() / "random" / "automata"))
    automata.push_back(krc::automaton_from_json(
        nlohmann::json::parse(krc::test::read_text(entry.path())), entry.path().string()));
  std::mt19937_64 rng(20240611);
  for (int i = 0; i < 1000; ++i) automata.push_back(krc::test::random_automaton(rng, 8, 4));
  return automata;
}

// apply() is a pure function of (coordinates, letter); remembering its results keeps 200
// words of length 50 from every state of 1000 automata within a second. Every step of every
// word still goes through apply() once per distinct (tuple, letter).
class CascadeRunner {
 public:
  explicit CascadeRunner(const HolonomyDecomposition& h) : h_(h) {}
  int id(const Coordinates& c) {
    auto [it, added] = ids_.emplace(c, static_cast<int>(tuples_.size()));
    if (added) {
      tuples_.push_back(c);
      next_.resize(tuples_.size() * h_.automaton().letter_count(), -1);
    }
    return it->second;
  }
  int step(int from, LetterId a) {
    const std::size_t slot = static_cast<std::size_t>(from) * h_.automaton().letter_count() + a;
    if (next_[slot] < 0) {
      int to = id(h_.apply(tuples_[static_cast<std::size_t>(from)], a));
      next_[slot] = to;  // `next_` may have grown inside id(): index again
    }
    return next_[slot];
  }
  const Coordinates& tuple(int id) const { return tuples_[static_cast<std::size_t>(id)]; }

 private:
  const HolonomyDecomposition& h_;
  std::map<Coordinates, int> ids_;
  std::vector<Coordinates> tuples_;
  std::vector<int> next_;
};

}  // namespace

TEST_CASE("decode(encode(q)) = q") {
  for (const auto& automaton : emulation_automata()) {
    CAPTURE(automaton.name());
    HolonomyDecomposition h = HolonomyDecomposition::compute(automaton);
    for (StateId q = 0; q < automaton.state_count(); ++q) CHECK(h.decode(h.encode(q)) == q);
  }
}

TEST_CASE("emulation: 200 random words from every state of every test automaton") {
  std::mt19937_64 rng(7);
  for (const auto& automaton : emulation_automata()) {
    CAPTURE(automaton.name());
    HolonomyDecomposition h = HolonomyDecomposition::compute(automaton);
    CascadeRunner runner(h);
    std::uniform_int_distribution<LetterId> letter(
        0, static_cast<LetterId>(automaton.letter_count() - 1));
    std::uniform_int_distribution<int> length(0, 50);
    int failures = 0;
    for (StateId q = 0; q < automaton.state_count(); ++q) {
      for (int w = 0; w < 200; ++w) {
        std::vector<LetterId> word(static_cast<std::size_t>(length(rng)));
        for (auto& a : word) a = letter(rng);
        int c = runner.id(h.encode(q));
        for (LetterId a : word) c = runner.step(c, a);
        if (h.decode(runner.tuple(c)) != automaton.run(word, q).back()) ++failures;
      }
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("emulation on every reachable tuple: the tables' successor decodes to q·a") {
  for (const auto& automaton : emulation_automata()) {
    CAPTURE(automaton.name());
    HolonomyDecomposition h = HolonomyDecomposition::compute(automaton);
    const auto& reachable = h.reachable();
    int failures = 0;
    for (StateId q = 0; q < automaton.state_count(); ++q)
      if (std::find(reachable.begin(), reachable.end(), h.encode(q)) == reachable.end()) ++failures;
    for (std::size_t i = 0; i < reachable.size(); ++i) {
      StateId q = h.decode(reachable[i]);
      for (LetterId a = 0; a < automaton.letter_count(); ++a) {
        const Coordinates& next = reachable[static_cast<std::size_t>(h.successor(i, a))];
        if (h.decode(next) != automaton.step(q, a)) ++failures;
        if (next != h.apply(reachable[i], a)) ++failures;
      }
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("the action tables hold act() for every reachable upper tuple, and only those") {
  for (const auto& automaton : emulation_automata()) {
    CAPTURE(automaton.name());
    HolonomyDecomposition h = HolonomyDecomposition::compute(automaton);
    int failures = 0;
    for (int d = 0; d < h.level_count(); ++d) {
      const auto& table = h.table(d);
      // The upper tuples are exactly the distinct length-d prefixes of reachable tuples.
      std::set<Coordinates> prefixes;
      for (const auto& c : h.reachable()) prefixes.emplace(c.begin(), c.begin() + d);
      std::set<Coordinates> listed(table.upper.begin(), table.upper.end());
      if (prefixes != listed || listed.size() != table.upper.size()) ++failures;
      for (std::size_t u = 0; u < table.upper.size(); ++u) {
        if (h.upper_index(d, table.upper[u]) != static_cast<int>(u)) ++failures;
        for (LetterId a = 0; a < automaton.letter_count(); ++a)
          if (!(table.action[u][a] == h.act(d, table.upper[u], a))) ++failures;
      }
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("each level's action is a permutation of one slot or a reset to a valid value") {
  for (const auto& automaton : emulation_automata()) {
    CAPTURE(automaton.name());
    HolonomyDecomposition h = HolonomyDecomposition::compute(automaton);
    int failures = 0;
    for (int d = 0; d < h.level_count(); ++d) {
      const auto& level = h.level(d);
      for (const auto& row : h.table(d).action)
        for (const auto& action : row) {
          if (action.reset) {
            if (action.reset_to < 0 || action.reset_to >= level.width) ++failures;
            continue;
          }
          if (action.slot < 0 || action.slot >= static_cast<int>(level.slots.size())) {
            ++failures;
            continue;
          }
          std::vector<int> sorted = action.permutation;
          std::sort(sorted.begin(), sorted.end());
          for (std::size_t i = 0; i < sorted.size(); ++i)
            if (sorted[i] != static_cast<int>(i)) ++failures;
          if (sorted.size() != level.slots[static_cast<std::size_t>(action.slot)].tiles.size())
            ++failures;
        }
    }
    CHECK(failures == 0);
  }
}
