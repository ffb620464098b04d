#pragma once
// The holonomy skeleton of a semiautomaton (README "Decomposition"; steps 1-7 as SgpDec 1.2
// computes them):
// the image orbit of the state set, the extended image set E (images plus the singletons that
// are not images), tiles, subduction classes (strongly connected components of the orbit
// graph), their depths, and the transport of tiles along each class (fromRep / toRep).
//
// Sets are numbered by their index in E: the images first in breadth-first order (index 0 is
// the state set Q), then the non-image singletons. E is closed under the letters, so the
// action of a letter on E is a table. The semigroup is never enumerated.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/decompose/decompose_options.hpp"
#include "krc/decompose/set_family.hpp"

namespace krc {

class StageBudget;

class Skeleton {
 public:
  static Skeleton compute(const Automaton& automaton, const DecomposeOptions& options = {});

  std::size_t state_count() const { return sets_.universe_size(); }
  std::size_t letter_count() const { return letters_; }

  // E: images first, then non-image singletons.
  const SetFamily& sets() const { return sets_; }
  std::size_t set_count() const { return sets_.size(); }
  std::size_t image_count() const { return image_count_; }
  bool is_image(std::size_t e) const { return e < image_count_; }
  bool is_singleton(std::size_t e) const { return sets_.cardinality(e) == 1; }
  std::vector<StateId> states_of(std::size_t e) const;
  std::size_t singleton(StateId q) const { return singleton_[q]; }
  // E·a, an index into E.
  std::size_t successor(std::size_t e, LetterId a) const { return successor_[e * letters_ + a]; }

  // Subduction classes of the images, numbered in order of first appearance in the orbit
  // (class 0 holds Q); the representative of a class is its first member in that order.
  std::size_t class_count() const { return representative_.size(); }
  int class_of(std::size_t e) const { return e < image_count_ ? class_of_[e] : -1; }
  std::size_t representative(int cls) const { return representative_[cls]; }
  const std::vector<std::size_t>& class_members(int cls) const { return members_[cls]; }
  bool is_singleton_class(int cls) const { return is_singleton(representative_[cls]); }
  // Classes directly below a class: images and image tiles of its members (no self loops).
  const std::vector<int>& class_children(int cls) const { return children_[cls]; }

  // Depth 1 is the class of Q; a class lies at 1 + the longest path to it from there in the
  // class order (SgpDec 1.2). Singletons (images or not) have depth depth_of_skeleton(), one
  // below the deepest class.
  int class_depth(int cls) const { return class_depth_[cls]; }
  int depth(std::size_t e) const;
  int depth_of_skeleton() const { return skeleton_depth_; }
  int level_count() const { return skeleton_depth_ - 1; }

  // Tiles of a non-singleton image A (empty for singletons): tile i of A is tile i of Rep(A)
  // moved by fromRep(A), so every member of a class lists its tiles in its representative's
  // order. The representative's own tiles are sorted by size (descending), then elements.
  std::span<const std::uint32_t> tiles(std::size_t e) const;
  // Position of `tile` among tiles(e), or -1.
  int tile_position(std::size_t e, std::size_t tile) const;
  // The first tile of e (in tiles(e) order) that contains `subset` (a proper subset of e in E).
  std::size_t tile_containing(std::size_t e, std::size_t subset) const;

  // The round trip fromRep(A)·a·toRep(A·a) as a permutation of Rep(A)'s tiles, when A·a lies
  // in A's class (false otherwise): tile i goes to out[i].
  bool round_trip(std::size_t e, LetterId a, std::vector<int>& out) const;

 private:
  // The steps of compute(), numbered as there.
  void add_orbit(const Automaton& automaton, const StageBudget& budget);
  void add_singletons(const Automaton& automaton, const StageBudget& budget);
  void find_classes();
  std::vector<std::vector<std::uint32_t>> representative_tiles(const StageBudget& budget) const;
  void transport_tiles(const std::vector<std::vector<std::uint32_t>>& rep_tiles);
  void order_classes(const std::vector<std::vector<std::uint32_t>>& rep_tiles);
  void assign_depths();

  SetFamily sets_{0};
  std::size_t letters_ = 0, image_count_ = 0;
  std::vector<std::uint32_t> successor_;
  std::vector<std::size_t> singleton_;
  std::vector<int> class_of_;
  std::vector<std::size_t> representative_;
  std::vector<std::vector<std::size_t>> members_;
  std::vector<std::vector<int>> children_;
  std::vector<int> class_depth_;
  int skeleton_depth_ = 1;
  std::vector<std::size_t> tile_offset_;  // per set, into tile_data_ (size set_count + 1)
  std::vector<std::uint32_t> tile_data_;
  // (set << 32 | tile) -> position, for sets with many tiles (linear search for the others).
  std::unordered_map<std::uint64_t, std::uint32_t> wide_tile_position_;
};

}  // namespace krc
