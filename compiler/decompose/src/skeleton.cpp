#include "krc/decompose/skeleton.hpp"

#include <algorithm>
#include <bit>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>
#include <stdexcept>
#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "stage_budget.hpp"

namespace krc {

namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// Sets of E ordered as SgpDec orders tiles: larger first, then by their sorted elements.
bool tile_order(const SetFamily& sets, std::size_t a, std::size_t b) {
  if (sets.cardinality(a) != sets.cardinality(b)) return sets.cardinality(a) > sets.cardinality(b);
  return set_bits::elements(sets.set(a)) < set_bits::elements(sets.set(b));
}

// Smallest and largest element of each set: a subset lies within its superset's bounds, which
// rejects most candidates of a large universe before comparing words.
struct Bounds {
  std::uint32_t low, high;
};

// The maximal proper subsets of `whole` among the sets of E (`by_size[c]` lists the sets of
// cardinality c). A candidate is maximal unless it lies inside a larger tile already found.
std::vector<std::uint32_t> maximal_subsets(const SetFamily& sets,
                                           const std::vector<std::vector<std::uint32_t>>& by_size,
                                           const std::vector<Bounds>& bounds, std::size_t whole) {
  std::vector<std::uint32_t> tiles;
  auto whole_bits = sets.set(whole);
  const Bounds outer = bounds[whole];
  for (std::size_t c = sets.cardinality(whole); c-- > 1;) {
    for (std::uint32_t e : by_size[c]) {
      const Bounds inner = bounds[e];
      if (inner.low < outer.low || inner.high > outer.high) continue;
      const std::size_t first = inner.low / 64, last = inner.high / 64 + 1;
      auto bits = sets.set(e).subspan(first, last - first);
      if (!set_bits::is_subset(bits, whole_bits.subspan(first, last - first))) continue;
      bool inside_tile = std::any_of(tiles.begin(), tiles.end(), [&](std::uint32_t t) {
        return bounds[t].low <= inner.low && inner.high <= bounds[t].high &&
               set_bits::is_subset(bits, sets.set(t).subspan(first, last - first));
      });
      if (!inside_tile) tiles.push_back(e);
    }
  }
  std::sort(tiles.begin(), tiles.end(),
            [&](std::uint32_t a, std::uint32_t b) { return tile_order(sets, a, b); });
  return tiles;
}

}  // namespace

std::vector<StateId> Skeleton::states_of(std::size_t e) const {
  auto elements = set_bits::elements(sets_.set(e));
  return {elements.begin(), elements.end()};
}

int Skeleton::depth(std::size_t e) const {
  if (is_singleton(e)) return skeleton_depth_;
  return class_depth_[class_of_[e]];
}

std::span<const std::uint32_t> Skeleton::tiles(std::size_t e) const {
  return {tile_data_.data() + tile_offset_[e], tile_offset_[e + 1] - tile_offset_[e]};
}

constexpr std::size_t kLinearTileSearch = 16;

int Skeleton::tile_position(std::size_t e, std::size_t tile) const {
  auto t = tiles(e);
  if (t.size() > kLinearTileSearch) {
    auto it = wide_tile_position_.find(static_cast<std::uint64_t>(e) << 32 | tile);
    return it == wide_tile_position_.end() ? -1 : static_cast<int>(it->second);
  }
  auto it = std::find(t.begin(), t.end(), static_cast<std::uint32_t>(tile));
  return it == t.end() ? -1 : static_cast<int>(it - t.begin());
}

std::size_t Skeleton::tile_containing(std::size_t e, std::size_t subset) const {
  auto bits = sets_.set(subset);
  for (std::uint32_t t : tiles(e))
    if (set_bits::is_subset(bits, sets_.set(t))) return t;
  throw std::logic_error("holonomy skeleton: no tile contains a proper subset");
}

bool Skeleton::round_trip(std::size_t e, LetterId a, std::vector<int>& out) const {
  if (!is_image(e) || is_singleton(e)) return false;
  std::size_t image = successor(e, a);
  if (class_of_[image] != class_of_[e]) return false;
  auto from = tiles(e);
  out.resize(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) {
    out[i] = tile_position(image, successor(from[i], a));
    if (out[i] < 0)
      throw std::logic_error("holonomy skeleton: a round trip does not permute tiles");
  }
  return true;
}

namespace {

// What a set of E costs: its bits, successor row and index slots (the limit on image bytes),
// and (below) its vertex and edges in the orbit graph and a few per-set arrays; arrays grow by
// doubling, so at a reallocation the old and the new one coexist: three times the rest, for the
// memory budget.
struct SetCost {
  std::size_t per_image;
  std::uint64_t per_set;
};

SetCost set_cost(std::size_t words, std::size_t letters) {
  const std::size_t per_image = words * sizeof(SetWord) + letters * sizeof(std::uint32_t) + 12;
  return {per_image, 3 * (per_image + 64 + 16 * letters)};
}

// The orbit's cap: the limit on images, or as many as fit in max_image_bytes, whichever is less.
StageBudget orbit_budget(const DecomposeOptions& options, SetCost cost) {
  const std::size_t by_bytes = options.max_image_bytes / cost.per_image;
  const bool by_count = options.max_images <= by_bytes;
  StageBudget::Cap cap;
  cap.items = std::min(options.max_images, by_bytes);
  cap.limit =
      by_count ? DecomposeLimitError::Limit::MaxImages : DecomposeLimitError::Limit::MaxImageBytes;
  cap.setting = by_count ? options.max_images : options.max_image_bytes;
  return StageBudget(options, cost.per_set, cap);
}

// The smallest and largest element of every set of E.
std::vector<Bounds> bounds_of(const SetFamily& sets) {
  const std::size_t words = sets.words_per_set();
  std::vector<Bounds> bounds(sets.size());
  for (std::size_t e = 0; e < sets.size(); ++e) {
    auto bits = sets.set(e);
    std::size_t first = 0, last = words - 1;
    while (bits[first] == 0) ++first;
    while (bits[last] == 0) --last;
    bounds[e] = {static_cast<std::uint32_t>(
                     first * 64 + static_cast<std::size_t>(std::countr_zero(bits[first]))),
                 static_cast<std::uint32_t>(
                     last * 64 + 63 - static_cast<std::size_t>(std::countl_zero(bits[last])))};
  }
  return bounds;
}

}  // namespace

Skeleton Skeleton::compute(const Automaton& automaton, const DecomposeOptions& options) {
  const std::size_t n = automaton.state_count();
  if (n == 0) throw std::invalid_argument("holonomy decomposition: the automaton has no states");
  Skeleton sk;
  sk.letters_ = automaton.letter_count();
  sk.sets_ = SetFamily(n);
  const StageBudget budget = orbit_budget(options, set_cost(sk.sets_.words_per_set(), sk.letters_));
  sk.add_orbit(automaton, budget);                         // 1
  sk.add_singletons(automaton, budget);                    // 2
  sk.find_classes();                                       // 3
  const auto rep_tiles = sk.representative_tiles(budget);  // 4
  sk.transport_tiles(rep_tiles);                           // 5
  sk.order_classes(rep_tiles);                             // 6
  sk.assign_depths();                                      // 7
  return sk;
}

// 1. The orbit of Q, breadth first, with the orbit graph as a successor table.
void Skeleton::add_orbit(const Automaton& automaton, const StageBudget& budget) {
  const std::size_t n = automaton.state_count(), k = letters_, words = sets_.words_per_set();
  std::vector<SetWord> current(words), image(words);
  for (std::size_t q = 0; q < n; ++q) set_bits::set(current, q);
  sets_.insert(current);
  StageProgress progress(budget, std::size_t{1} << 18);
  for (std::size_t i = 0; i < sets_.size(); ++i) {
    auto source = sets_.set(i);
    std::copy(source.begin(), source.end(), current.begin());
    for (LetterId a = 0; a < k; ++a) {
      const auto& delta = automaton.letter_action(a);
      std::fill(image.begin(), image.end(), 0);
      for (std::size_t w = 0; w < words; ++w)
        for (SetWord bits = current[w]; bits; bits &= bits - 1)
          set_bits::set(image, delta[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))]);
      successor_.push_back(static_cast<std::uint32_t>(sets_.insert(image)));
    }
    budget.check(
        sets_.size(),
        [&] {
          return "the image orbit of '" + automaton.name() + "' (more than " +
                 std::to_string(budget.memory_items()) + " sets of " + std::to_string(n) +
                 " states)";
        },
        [&] {
          const bool by_count = budget.cap().limit == DecomposeLimitError::Limit::MaxImages;
          return "the image orbit of '" + automaton.name() + "' has more than " +
                 std::to_string(budget.cap().items) + " sets of " + std::to_string(n) +
                 " states (" +
                 (by_count ? "the limit on images"
                           : "as many as fit in " + std::to_string(budget.cap().setting >> 20) +
                                 " MiB") +
                 "); the holonomy decomposition is out of reach";
        });
    progress.at(sets_.size(), [&] {
      return "orbit of the state set: " + std::to_string(sets_.size()) + " images so far";
    });
  }
  image_count_ = sets_.size();
}

// 2. The extended image set: singletons that are not images; E is closed under letters.
void Skeleton::add_singletons(const Automaton& automaton, const StageBudget& budget) {
  const std::size_t n = automaton.state_count();
  budget.check_memory_for(saturating_add(sets_.size(), n),
                          "the extended image set of '" + automaton.name() + "' (" +
                              std::to_string(sets_.size()) + " images and up to " +
                              std::to_string(n) + " singletons, " + std::to_string(n) +
                              " states each)");
  std::vector<SetWord> current(sets_.words_per_set());
  singleton_.resize(n);
  for (std::size_t q = 0; q < n; ++q) {
    std::fill(current.begin(), current.end(), 0);
    set_bits::set(current, q);
    singleton_[q] = sets_.insert(current);
  }
  for (std::size_t e = image_count_; e < sets_.size(); ++e) {
    std::size_t q = set_bits::elements(sets_.set(e)).front();
    for (LetterId a = 0; a < letters_; ++a)
      successor_.push_back(
          static_cast<std::uint32_t>(singleton_[automaton.step(static_cast<StateId>(q), a)]));
  }
}

// 3. Subduction classes: strongly connected components of the orbit graph, renumbered in order
// of first appearance so that class 0 holds Q and representatives come first.
void Skeleton::find_classes() {
  const std::size_t images = image_count_;
  Graph orbit_graph(images);
  for (std::size_t e = 0; e < images; ++e)
    for (LetterId a = 0; a < letters_; ++a) boost::add_edge(e, successor(e, a), orbit_graph);
  std::vector<int> component(images);
  boost::strong_components(orbit_graph, component.data());
  std::vector<int> renumber(images, -1);
  class_of_.resize(images);
  for (std::size_t e = 0; e < images; ++e) {
    int& cls = renumber[component[e]];
    if (cls < 0) {
      cls = static_cast<int>(representative_.size());
      representative_.push_back(e);
      members_.emplace_back();
    }
    class_of_[e] = cls;
    members_[cls].push_back(e);
  }
}

// 4. Tiles of each representative by scanning E from larger sets to smaller ones.
std::vector<std::vector<std::uint32_t>> Skeleton::representative_tiles(
    const StageBudget& budget) const {
  const std::size_t classes = class_count();
  std::vector<std::vector<std::uint32_t>> by_size(state_count() + 1);
  for (std::size_t e = 0; e < sets_.size(); ++e)
    by_size[sets_.cardinality(e)].push_back(static_cast<std::uint32_t>(e));
  const std::vector<Bounds> bounds = bounds_of(sets_);
  if (static_cast<double>(classes) * static_cast<double>(sets_.size()) > 2e8)
    budget.say([&] {
      return "tiles: scanning " + std::to_string(sets_.size()) + " sets for each of " +
             std::to_string(classes) + " class representatives (this may take a while)";
    });
  std::vector<std::vector<std::uint32_t>> rep_tiles(classes);
  for (std::size_t c = 0; c < classes; ++c)
    if (!is_singleton(representative_[c]))
      rep_tiles[c] = maximal_subsets(sets_, by_size, bounds, representative_[c]);
  return rep_tiles;
}

// 5. Transport the tiles along each class: a breadth-first tree inside the class from the
// representative gives fromRep(A·a) = fromRep(A)·a, and a permutes the tiles of A onto the
// tiles of A·a because it is a bijection A -> A·a that an element of S inverts.
void Skeleton::transport_tiles(const std::vector<std::vector<std::uint32_t>>& rep_tiles) {
  const std::size_t images = image_count_;
  tile_offset_.assign(sets_.size() + 1, 0);
  for (std::size_t e = 0; e < sets_.size(); ++e)
    tile_offset_[e + 1] = tile_offset_[e] + (e < images ? rep_tiles[class_of_[e]].size() : 0);
  tile_data_.assign(tile_offset_.back(), 0);
  std::vector<char> placed(images, 0);
  for (std::size_t c = 0; c < class_count(); ++c) {
    if (rep_tiles[c].empty()) continue;
    std::size_t rep = representative_[c];
    std::copy(rep_tiles[c].begin(), rep_tiles[c].end(),
              tile_data_.begin() + static_cast<std::ptrdiff_t>(tile_offset_[rep]));
    placed[rep] = 1;
    std::vector<std::size_t> queue{rep};
    for (std::size_t head = 0; head < queue.size(); ++head) {
      std::size_t from = queue[head];
      for (LetterId a = 0; a < letters_; ++a) {
        std::size_t to = successor(from, a);
        if (placed[to] || class_of_[to] != static_cast<int>(c)) continue;
        placed[to] = 1;
        for (std::size_t i = 0; i < rep_tiles[c].size(); ++i)
          tile_data_[tile_offset_[to] + i] =
              static_cast<std::uint32_t>(successor(tile_data_[tile_offset_[from] + i], a));
        queue.push_back(to);
      }
    }
  }
  for (std::size_t e = 0; e < images; ++e) {
    auto t = tiles(e);
    if (t.size() <= kLinearTileSearch) continue;
    for (std::size_t i = 0; i < t.size(); ++i)
      wide_tile_position_.emplace(static_cast<std::uint64_t>(e) << 32 | t[i],
                                  static_cast<std::uint32_t>(i));
  }
}

// 6. The class order: direct images and image tiles of members, without self loops.
void Skeleton::order_classes(const std::vector<std::vector<std::uint32_t>>& rep_tiles) {
  children_.assign(class_count(), {});
  for (std::size_t e = 0; e < image_count_; ++e) {
    int c = class_of_[e];
    if (is_singleton(e)) continue;
    for (LetterId a = 0; a < letters_; ++a) {
      int d = class_of_[successor(e, a)];
      if (d != c) children_[c].push_back(d);
    }
  }
  for (std::size_t c = 0; c < class_count(); ++c) {
    for (std::uint32_t t : rep_tiles[c])
      if (is_image(t)) children_[c].push_back(class_of_[t]);
    auto& ch = children_[c];
    std::sort(ch.begin(), ch.end());
    ch.erase(std::unique(ch.begin(), ch.end()), ch.end());
  }
}

// 7. Depth as SgpDec 1.2 defines it (since 0.9.8, "loose components are pushed upwards"): a
// non-singleton class lies at 1 + the longest path from the class of Q in the class order,
// singletons at the bottom, one below the deepest class. The order is acyclic and its edges
// only go down, so parents come first in a topological order.
void Skeleton::assign_depths() {
  const std::size_t classes = class_count();
  std::vector<int> longest(classes, 0);
  Graph order(classes);
  for (std::size_t c = 0; c < classes; ++c)
    for (int d : children_[c]) boost::add_edge(c, static_cast<std::size_t>(d), order);
  std::vector<std::size_t> children_first;
  boost::topological_sort(order, std::back_inserter(children_first));
  for (auto it = children_first.rbegin(); it != children_first.rend(); ++it)
    for (int d : children_[*it]) longest[d] = std::max(longest[d], longest[*it] + 1);
  int deepest = 0;
  for (std::size_t c = 0; c < classes; ++c)
    if (!is_singleton_class(static_cast<int>(c))) deepest = std::max(deepest, longest[c] + 1);
  skeleton_depth_ = deepest + 1;
  class_depth_.resize(classes);
  for (std::size_t c = 0; c < classes; ++c)
    class_depth_[c] = is_singleton_class(static_cast<int>(c)) ? skeleton_depth_ : longest[c] + 1;
}

}  // namespace krc
