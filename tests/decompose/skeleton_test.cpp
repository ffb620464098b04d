// The skeleton against brute force on small automata: images, tiles, subduction classes and
// depths recomputed here from their definitions with plain sets, and the holonomy groups
// against the permutations of tiles induced by the whole (enumerated) semigroup.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "krc/automata/input_error.hpp"
#include "krc/decompose/holonomy.hpp"
#include "test_support.hpp"

using krc::StateId;
using StateSet = std::vector<StateId>;  // sorted

namespace {

StateSet image_of(const StateSet& set, const krc::Transformation& t) {
  std::set<StateId> out;
  for (StateId q : set) out.insert(t[q]);
  return {out.begin(), out.end()};
}

bool proper_subset(const StateSet& a, const StateSet& b) {
  return a.size() < b.size() && std::includes(b.begin(), b.end(), a.begin(), a.end());
}

struct BruteSkeleton {
  std::set<StateSet> images, extended;
  std::map<StateSet, std::set<StateSet>> tiles;
  std::map<StateSet, std::set<StateSet>> reachable;  // A -> every A·w (w possibly empty)
};

BruteSkeleton brute_skeleton(const krc::Automaton& automaton) {
  BruteSkeleton b;
  StateSet all(automaton.state_count());
  for (StateId q = 0; q < all.size(); ++q) all[q] = q;
  std::vector<StateSet> queue{all};
  b.images.insert(all);
  for (std::size_t i = 0; i < queue.size(); ++i)
    for (krc::LetterId a = 0; a < automaton.letter_count(); ++a) {
      StateSet next = image_of(queue[i], automaton.letter_action(a));
      if (b.images.insert(next).second) queue.push_back(next);
    }
  b.extended = b.images;
  for (StateId q = 0; q < all.size(); ++q) b.extended.insert(StateSet{q});
  for (const auto& p : b.extended) {
    if (p.size() < 2) continue;
    for (const auto& t : b.extended) {
      if (!proper_subset(t, p)) continue;
      bool maximal = std::none_of(b.extended.begin(), b.extended.end(), [&](const StateSet& u) {
        return proper_subset(t, u) && proper_subset(u, p);
      });
      if (maximal) b.tiles[p].insert(t);
    }
  }
  for (const auto& a : b.images) {
    std::set<StateSet>& seen = b.reachable[a];
    std::vector<StateSet> todo{a};
    seen.insert(a);
    while (!todo.empty()) {
      StateSet x = todo.back();
      todo.pop_back();
      for (krc::LetterId l = 0; l < automaton.letter_count(); ++l) {
        StateSet y = image_of(x, automaton.letter_action(l));
        if (seen.insert(y).second) todo.push_back(y);
      }
    }
  }
  return b;
}

std::vector<krc::Automaton> small_automata(int count, int max_states, int max_letters,
                                           std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<krc::Automaton> out;
  for (int i = 0; i < count; ++i)
    out.push_back(krc::test::random_automaton(rng, max_states, max_letters));
  return out;
}

// Every transformation of a non-empty word (test-only enumeration).
std::set<krc::Transformation> semigroup(const krc::Automaton& automaton) {
  std::set<krc::Transformation> elements;
  std::vector<krc::Transformation> queue;
  for (krc::LetterId a = 0; a < automaton.letter_count(); ++a)
    if (elements.insert(automaton.letter_action(a)).second)
      queue.push_back(automaton.letter_action(a));
  for (std::size_t i = 0; i < queue.size(); ++i)
    for (krc::LetterId a = 0; a < automaton.letter_count(); ++a) {
      krc::Transformation next(queue[i].size());
      for (std::size_t q = 0; q < next.size(); ++q) next[q] = automaton.step(queue[i][q], a);
      if (elements.insert(next).second) queue.push_back(next);
    }
  return elements;
}

}  // namespace

TEST_CASE("images, tiles and subduction classes equal their definitions") {
  for (const auto& automaton : small_automata(300, 7, 3, 11)) {
    CAPTURE(automaton.name());
    auto h = krc::HolonomyDecomposition::compute(automaton);
    const auto& sk = h.skeleton();
    BruteSkeleton b = brute_skeleton(automaton);
    std::set<StateSet> images, extended;
    for (std::size_t e = 0; e < sk.set_count(); ++e) {
      extended.insert(sk.states_of(e));
      if (sk.is_image(e)) images.insert(sk.states_of(e));
    }
    CHECK(images == b.images);
    CHECK(extended == b.extended);
    CHECK(sk.set_count() == b.extended.size());
    int wrong = 0;
    for (std::size_t e = 0; e < sk.set_count(); ++e) {
      std::set<StateSet> tiles;
      for (auto t : sk.tiles(e)) tiles.insert(sk.states_of(t));
      if (sk.is_image(e) && tiles != b.tiles[sk.states_of(e)]) ++wrong;
      if (!sk.is_image(e) && !tiles.empty()) ++wrong;
    }
    // A and B are in one class exactly when each is an image of the other.
    for (std::size_t x = 0; x < sk.image_count(); ++x)
      for (std::size_t y = 0; y < sk.image_count(); ++y) {
        bool mutual = b.reachable[sk.states_of(x)].count(sk.states_of(y)) &&
                      b.reachable[sk.states_of(y)].count(sk.states_of(x));
        if (mutual != (sk.class_of(x) == sk.class_of(y))) ++wrong;
      }
    CHECK(wrong == 0);
  }
}

TEST_CASE("depths follow SgpDec 1.2 (longest path from the class of Q)") {
  for (const auto& automaton : small_automata(300, 7, 3, 12)) {
    CAPTURE(automaton.name());
    auto h = krc::HolonomyDecomposition::compute(automaton, {});
    const auto& sk = h.skeleton();
    BruteSkeleton b = brute_skeleton(automaton);
    // Classes as sets of sets; C is directly above D when a member of D is an image A·a or
    // an image tile of a member A of C (D != C).
    auto class_of = [&](const StateSet& s) {
      std::set<StateSet> cls;
      for (const auto& t : b.images)
        if (b.reachable[s].count(t) && b.reachable[t].count(s)) cls.insert(t);
      return cls;
    };
    std::map<std::set<StateSet>, std::set<std::set<StateSet>>> below;
    for (const auto& a : b.images) {
      auto c = class_of(a);
      if (a.size() == 1) continue;
      std::vector<StateSet> next;
      for (krc::LetterId l = 0; l < automaton.letter_count(); ++l)
        next.push_back(image_of(a, automaton.letter_action(l)));
      for (const auto& t : b.tiles[a])
        if (b.images.count(t)) next.push_back(t);
      for (const auto& n : next)
        if (class_of(n) != c) below[c].insert(class_of(n));
    }
    // SgpDec 1.2: depth = 1 + the longest path down from the class of Q; singletons one
    // below the deepest class.
    std::map<std::set<StateSet>, int> memo;
    std::function<int(const std::set<StateSet>&)> depth = [&](const std::set<StateSet>& c) -> int {
      if (auto it = memo.find(c); it != memo.end()) return it->second;
      int best = 0;
      for (const auto& [above, children] : below)
        if (children.count(c)) best = std::max(best, depth(above));
      return memo[c] = best + 1;
    };
    int deepest = 0, wrong = 0;
    for (const auto& a : b.images)
      if (a.size() > 1) deepest = std::max(deepest, depth(class_of(a)));
    CHECK(sk.depth_of_skeleton() == deepest + 1);
    for (std::size_t e = 0; e < sk.set_count(); ++e) {
      const int expected = sk.is_singleton(e) ? deepest + 1 : depth(class_of(sk.states_of(e)));
      if (sk.depth(e) != expected) ++wrong;
    }
    CHECK(wrong == 0);
    // The old rule (SgpDec before 0.9.8: height = longest path down to a singleton class,
    // depth = height(Q) - height + 1) gives the same number of levels.
    std::map<std::set<StateSet>, int> heights;
    std::function<int(const std::set<StateSet>&)> height = [&](const std::set<StateSet>& c) -> int {
      if (c.begin()->size() == 1) return 0;
      if (auto it = heights.find(c); it != heights.end()) return it->second;
      int best = 0;
      for (const auto& d : below[c]) best = std::max(best, height(d));
      return heights[c] = best + 1;
    };
    StateSet all =
        *std::max_element(b.images.begin(), b.images.end(),
                          [](const StateSet& x, const StateSet& y) { return x.size() < y.size(); });
    if (all.size() > 1) CHECK(sk.depth_of_skeleton() == height(class_of(all)) + 1);
  }
}

TEST_CASE("holonomy groups: the tile permutations induced by every element stabilising R") {
  for (const auto& automaton : small_automata(200, 6, 3, 13)) {
    CAPTURE(automaton.name());
    auto h = krc::HolonomyDecomposition::compute(automaton);
    auto elements = semigroup(automaton);
    bool has_nontrivial_group = false;
    for (const auto& s : elements) {
      // s lies in a non-trivial subgroup of S exactly when its powers cycle with period > 1.
      std::vector<krc::Transformation> powers{s};
      for (;;) {
        krc::Transformation next(s.size());
        for (std::size_t q = 0; q < s.size(); ++q) next[q] = s[powers.back()[q]];
        auto it = std::find(powers.begin(), powers.end(), next);
        if (it != powers.end()) {
          if (powers.end() - it > 1) has_nontrivial_group = true;
          break;
        }
        powers.push_back(next);
      }
    }
    CHECK(h.aperiodic() == !has_nontrivial_group);
    for (int d = 0; d < h.level_count(); ++d)
      for (const auto& slot : h.level(d).slots) {
        std::set<std::vector<int>> induced;
        for (const auto& s : elements) {
          if (image_of(slot.representative, s) != slot.representative) continue;
          std::vector<int> p;
          for (const auto& tile : slot.tiles) {
            auto it = std::find(slot.tiles.begin(), slot.tiles.end(), image_of(tile, s));
            REQUIRE(it != slot.tiles.end());
            p.push_back(static_cast<int>(it - slot.tiles.begin()));
          }
          induced.insert(p);
        }
        std::vector<int> identity(slot.tiles.size());
        for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
        induced.insert(identity);  // S¹: the empty word stabilises every set
        CHECK(slot.group.order == induced.size());
        for (const auto& g : slot.generators) CHECK(induced.count(g) == 1);
      }
  }
}

TEST_CASE("degenerate automata: one state, no change, identity letters") {
  SUBCASE("one state: no levels, the empty tuple is the state") {
    krc::Automaton one("one", {"x"}, {"a"}, {{0}}, 0);
    auto h = krc::HolonomyDecomposition::compute(one);
    CHECK(h.level_count() == 0);
    CHECK(h.encode(0).empty());
    CHECK(h.decode({}) == 0);
    CHECK(h.apply({}, 0).empty());
    CHECK(h.reachable().size() == 1);
  }
  SUBCASE("identity letter on three states: one level of three tiles, trivial group") {
    krc::Automaton still("still", {"p", "q", "r"}, {"a"}, {{0, 1, 2}}, 0);
    auto h = krc::HolonomyDecomposition::compute(still);
    REQUIRE(h.level_count() == 1);
    REQUIRE(h.level(0).slots.size() == 1);
    CHECK(h.level(0).slots[0].tiles.size() == 3);
    CHECK(h.level(0).slots[0].group.order == 1);
    for (StateId q = 0; q < 3; ++q) CHECK(h.decode(h.apply(h.encode(q), 0)) == q);
  }
}

TEST_CASE("limits stop with a DecomposeLimitError that says which limit and its value") {
  // T_8's three generators: 255 images and 40320 reachable tuples.
  std::vector<std::string> states, letters{"c", "t", "e"};
  std::vector<std::vector<StateId>> delta(3, std::vector<StateId>(8));
  for (StateId q = 0; q < 8; ++q) {
    states.push_back(std::to_string(q));
    delta[0][q] = (q + 1) % 8;
    delta[1][q] = q == 0 ? 1 : q == 1 ? 0 : q;
    delta[2][q] = q == 1 ? 0 : q;
  }
  krc::Automaton t8("t8", states, letters, delta, 0);
  krc::DecomposeOptions few_images;
  few_images.max_images = 100;
  using Limit = krc::DecomposeLimitError::Limit;
  auto limit_of = [&](const krc::DecomposeOptions& options) -> std::pair<Limit, std::size_t> {
    try {
      krc::HolonomyDecomposition::compute(t8, options);
    } catch (const krc::DecomposeLimitError& e) {
      return {e.limit(), e.value()};
    }
    FAIL("no DecomposeLimitError");
    return {};
  };
  CHECK(limit_of(few_images) == std::pair{Limit::MaxImages, std::size_t{100}});
  krc::DecomposeOptions few_bytes;
  few_bytes.max_image_bytes = 4096;  // 255 images of 8 states take about 36 bytes each
  CHECK(limit_of(few_bytes) == std::pair{Limit::MaxImageBytes, std::size_t{4096}});
  krc::DecomposeOptions few_tuples;
  few_tuples.max_tuples = 1000;
  CHECK(limit_of(few_tuples) == std::pair{Limit::MaxTuples, std::size_t{1000}});
  krc::DecomposeOptions few_cells;
  few_cells.max_table_cells = 5000;
  CHECK(limit_of(few_cells) == std::pair{Limit::MaxTableCells, std::size_t{5000}});
  few_tuples.build_tables = false;  // the skeleton alone is fine
  CHECK(krc::HolonomyDecomposition::compute(t8, few_tuples).level_count() == 7);
}
