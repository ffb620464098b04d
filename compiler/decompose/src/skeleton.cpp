#include "krc/skeleton.hpp"

#include <algorithm>
#include <bit>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>
#include <stdexcept>
#include <string>

#include "krc/input_error.hpp"
#include "krc/memory_budget.hpp"

namespace krc {

namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

void report(const DecomposeOptions& options, const std::string& message) {
  if (options.progress) options.progress(message);
}

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

Skeleton Skeleton::compute(const Automaton& automaton, const DecomposeOptions& options) {
  const std::size_t n = automaton.state_count(), k = automaton.letter_count();
  if (n == 0) throw std::invalid_argument("holonomy decomposition: the automaton has no states");
  Skeleton sk;
  sk.letters_ = k;
  sk.sets_ = SetFamily(n);
  SetFamily& sets = sk.sets_;
  const std::size_t words = sets.words_per_set();

  // 1. The orbit of Q, breadth first, with the orbit graph as a successor table.
  std::vector<SetWord> current(words), image(words);
  for (std::size_t q = 0; q < n; ++q) set_bits::set(current, q);
  sets.insert(current);
  std::size_t next_report = std::size_t{1} << 18;
  // A set of E costs its bits, successor row and index slots, and (below) its vertex and edges
  // in the orbit graph and a few per-set arrays; arrays grow by doubling, so at a reallocation
  // the old and the new one coexist: three times the rest, for the memory budget.
  const std::size_t bytes_per_image = words * sizeof(SetWord) + k * sizeof(std::uint32_t) + 12;
  const std::uint64_t bytes_per_set = 3 * (bytes_per_image + 64 + 16 * k);
  const std::uint64_t budget_sets = memory_budget() / bytes_per_set;
  const std::size_t image_limit = static_cast<std::size_t>(std::min<std::uint64_t>(
      std::min(options.max_images, options.max_image_bytes / bytes_per_image), budget_sets));
  for (std::size_t i = 0; i < sets.size(); ++i) {
    auto source = sets.set(i);
    std::copy(source.begin(), source.end(), current.begin());
    for (LetterId a = 0; a < k; ++a) {
      const auto& delta = automaton.letter_action(a);
      std::fill(image.begin(), image.end(), 0);
      for (std::size_t w = 0; w < words; ++w)
        for (SetWord bits = current[w]; bits; bits &= bits - 1)
          set_bits::set(image, delta[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))]);
      sk.successor_.push_back(static_cast<std::uint32_t>(sets.insert(image)));
    }
    if (sets.size() > image_limit && sets.size() > budget_sets)
      check_memory("the image orbit of '" + automaton.name() + "' (more than " +
                       std::to_string(budget_sets) + " sets of " + std::to_string(n) + " states)",
                   saturating_mul(sets.size(), bytes_per_set));
    if (sets.size() > image_limit) {
      const bool by_count = image_limit == options.max_images;
      throw DecomposeLimitError(
          "the image orbit of '" + automaton.name() + "' has more than " +
              std::to_string(image_limit) + " sets of " + std::to_string(n) + " states (" +
              (by_count ? "the limit on images"
                        : "as many as fit in " + std::to_string(options.max_image_bytes >> 20) +
                              " MiB") +
              "); the holonomy decomposition is out of reach",
          by_count ? DecomposeLimitError::Limit::MaxImages
                   : DecomposeLimitError::Limit::MaxImageBytes,
          by_count ? options.max_images : options.max_image_bytes);
    }
    if (sets.size() >= next_report) {
      report(options, "orbit of the state set: " + std::to_string(sets.size()) + " images so far");
      next_report *= 2;
    }
  }
  sk.image_count_ = sets.size();

  // 2. The extended image set: singletons that are not images; E is closed under letters.
  check_memory("the extended image set of '" + automaton.name() + "' (" +
                   std::to_string(sets.size()) + " images and up to " + std::to_string(n) +
                   " singletons, " + std::to_string(n) + " states each)",
               saturating_mul(saturating_add(sets.size(), n), bytes_per_set));
  sk.singleton_.resize(n);
  for (std::size_t q = 0; q < n; ++q) {
    std::fill(current.begin(), current.end(), 0);
    set_bits::set(current, q);
    sk.singleton_[q] = sets.insert(current);
  }
  for (std::size_t e = sk.image_count_; e < sets.size(); ++e) {
    std::size_t q = set_bits::elements(sets.set(e)).front();
    for (LetterId a = 0; a < k; ++a)
      sk.successor_.push_back(
          static_cast<std::uint32_t>(sk.singleton_[automaton.step(static_cast<StateId>(q), a)]));
  }

  // 3. Subduction classes: strongly connected components of the orbit graph, renumbered in
  // order of first appearance so that class 0 holds Q and representatives come first.
  const std::size_t images = sk.image_count_;
  {
    Graph orbit_graph(images);
    for (std::size_t e = 0; e < images; ++e)
      for (LetterId a = 0; a < k; ++a) boost::add_edge(e, sk.successor(e, a), orbit_graph);
    std::vector<int> component(images);
    boost::strong_components(orbit_graph, component.data());
    std::vector<int> renumber(images, -1);
    sk.class_of_.resize(images);
    for (std::size_t e = 0; e < images; ++e) {
      int& cls = renumber[component[e]];
      if (cls < 0) {
        cls = static_cast<int>(sk.representative_.size());
        sk.representative_.push_back(e);
        sk.members_.emplace_back();
      }
      sk.class_of_[e] = cls;
      sk.members_[cls].push_back(e);
    }
  }
  const std::size_t classes = sk.representative_.size();

  // 4. Tiles of each representative by scanning E from larger sets to smaller ones.
  std::vector<std::vector<std::uint32_t>> by_size(n + 1);
  std::vector<Bounds> bounds(sets.size());
  for (std::size_t e = 0; e < sets.size(); ++e) {
    by_size[sets.cardinality(e)].push_back(static_cast<std::uint32_t>(e));
    auto bits = sets.set(e);
    std::size_t first = 0, last = words - 1;
    while (bits[first] == 0) ++first;
    while (bits[last] == 0) --last;
    bounds[e] = {static_cast<std::uint32_t>(
                     first * 64 + static_cast<std::size_t>(std::countr_zero(bits[first]))),
                 static_cast<std::uint32_t>(
                     last * 64 + 63 - static_cast<std::size_t>(std::countl_zero(bits[last])))};
  }
  if (static_cast<double>(classes) * static_cast<double>(sets.size()) > 2e8)
    report(options, "tiles: scanning " + std::to_string(sets.size()) + " sets for each of " +
                        std::to_string(classes) + " class representatives (this may take a while)");
  std::vector<std::vector<std::uint32_t>> rep_tiles(classes);
  for (std::size_t c = 0; c < classes; ++c)
    if (!sk.is_singleton(sk.representative_[c]))
      rep_tiles[c] = maximal_subsets(sets, by_size, bounds, sk.representative_[c]);

  // 5. Transport the tiles along each class: a breadth-first tree inside the class from the
  // representative gives fromRep(A·a) = fromRep(A)·a, and a permutes the tiles of A onto
  // the tiles of A·a because it is a bijection A -> A·a that an element of S inverts.
  sk.tile_offset_.assign(sets.size() + 1, 0);
  for (std::size_t e = 0; e < sets.size(); ++e)
    sk.tile_offset_[e + 1] =
        sk.tile_offset_[e] + (e < images ? rep_tiles[sk.class_of_[e]].size() : 0);
  sk.tile_data_.assign(sk.tile_offset_.back(), 0);
  std::vector<char> placed(images, 0);
  for (std::size_t c = 0; c < classes; ++c) {
    if (rep_tiles[c].empty()) continue;
    std::size_t rep = sk.representative_[c];
    std::copy(rep_tiles[c].begin(), rep_tiles[c].end(),
              sk.tile_data_.begin() + static_cast<std::ptrdiff_t>(sk.tile_offset_[rep]));
    placed[rep] = 1;
    std::vector<std::size_t> queue{rep};
    for (std::size_t head = 0; head < queue.size(); ++head) {
      std::size_t from = queue[head];
      for (LetterId a = 0; a < k; ++a) {
        std::size_t to = sk.successor(from, a);
        if (placed[to] || sk.class_of_[to] != static_cast<int>(c)) continue;
        placed[to] = 1;
        for (std::size_t i = 0; i < rep_tiles[c].size(); ++i)
          sk.tile_data_[sk.tile_offset_[to] + i] =
              static_cast<std::uint32_t>(sk.successor(sk.tile_data_[sk.tile_offset_[from] + i], a));
        queue.push_back(to);
      }
    }
  }

  for (std::size_t e = 0; e < images; ++e) {
    auto t = sk.tiles(e);
    if (t.size() <= kLinearTileSearch) continue;
    for (std::size_t i = 0; i < t.size(); ++i)
      sk.wide_tile_position_.emplace(static_cast<std::uint64_t>(e) << 32 | t[i],
                                     static_cast<std::uint32_t>(i));
  }

  // 6. The class order: direct images and image tiles of members, without self loops.
  sk.children_.assign(classes, {});
  for (std::size_t e = 0; e < images; ++e) {
    int c = sk.class_of_[e];
    if (sk.is_singleton(e)) continue;
    for (LetterId a = 0; a < k; ++a) {
      int d = sk.class_of_[sk.successor(e, a)];
      if (d != c) sk.children_[c].push_back(d);
    }
  }
  for (std::size_t c = 0; c < classes; ++c) {
    for (std::uint32_t t : rep_tiles[c])
      if (sk.is_image(t)) sk.children_[c].push_back(sk.class_of_[t]);
    auto& ch = sk.children_[c];
    std::sort(ch.begin(), ch.end());
    ch.erase(std::unique(ch.begin(), ch.end()), ch.end());
  }

  // 7. Depth as SgpDec 1.2 defines it (since 0.9.8, "loose components are pushed upwards"):
  // a non-singleton class lies at 1 + the longest path from the class of Q in the class
  // order, singletons at the bottom, one below the deepest class. The order is acyclic and
  // its edges only go down, so parents come first in a topological order.
  std::vector<int> longest(classes, 0);
  {
    Graph order(classes);
    for (std::size_t c = 0; c < classes; ++c)
      for (int d : sk.children_[c]) boost::add_edge(c, static_cast<std::size_t>(d), order);
    std::vector<std::size_t> children_first;
    boost::topological_sort(order, std::back_inserter(children_first));
    for (auto it = children_first.rbegin(); it != children_first.rend(); ++it)
      for (int d : sk.children_[*it]) longest[d] = std::max(longest[d], longest[*it] + 1);
  }
  int deepest = 0;
  for (std::size_t c = 0; c < classes; ++c)
    if (!sk.is_singleton_class(static_cast<int>(c))) deepest = std::max(deepest, longest[c] + 1);
  sk.skeleton_depth_ = deepest + 1;
  sk.class_depth_.resize(classes);
  for (std::size_t c = 0; c < classes; ++c)
    sk.class_depth_[c] =
        sk.is_singleton_class(static_cast<int>(c)) ? sk.skeleton_depth_ : longest[c] + 1;
  return sk;
}

}  // namespace krc
