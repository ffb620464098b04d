#pragma once
// The Krohn-Rhodes holonomy decomposition of a semiautomaton (compiler/README.md §4, what SgpDec
// computes): a cascade of permutation-reset levels whose product emulates the automaton.
//
// Levels are indexed from 0 here (level 1 of the printed output is index 0, the level whose
// coordinate is read first). A state's coordinates are one value per level: the tile of a
// representative chosen by its tile chain, or the level's dummy value where the chain skips
// the level. The action of a letter on level d reads only the letter and the coordinates of
// levels 0..d-1 before the step, and is a permutation of one slot's tiles or a reset.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/decompose/decompose_options.hpp"
#include "krc/decompose/group_info.hpp"
#include "krc/decompose/row_index.hpp"
#include "krc/decompose/skeleton.hpp"

namespace krc {

struct Slot {                                // one representative R of a level
  std::vector<StateId> representative;       // the set R, sorted
  std::vector<std::vector<StateId>> tiles;   // tiles(R), each sorted, in a fixed order
  std::vector<std::vector<int>> generators;  // holonomy group generators on tile indices
  GroupInfo group;
  int subduction_class = -1;  // the skeleton class of R
};

struct Level {
  std::vector<Slot> slots;
  int width = 0;   // number of coordinate values: sum of slot tile counts (+1 if dummy used)
  int dummy = -1;  // the value of chains that skip this level (the last value), -1 if none
  // value v (0 <= v < width, v != dummy) is tile tile_of[v] of slot slot_of[v]; for the
  // dummy both are -1
  std::vector<int> slot_of, tile_of;
  std::vector<int> first_value;  // first value of each slot
};

struct LevelAction {  // what one letter does to one level, given the levels above
  bool reset = false;
  int reset_to = -1;             // the new value (any value incl. the dummy) when reset
  int slot = -1;                 // when !reset: the slot whose tiles are permuted
  std::vector<int> permutation;  // when !reset: tile i of the slot goes to tile permutation[i]
  bool operator==(const LevelAction&) const = default;
};

using Coordinates = std::vector<int>;  // one value per level, level 1 first

class HolonomyDecomposition {
 public:
  // Throws krc::LimitError when an option's limit is exceeded (or memory runs out).
  static HolonomyDecomposition compute(const Automaton& automaton,
                                       const DecomposeOptions& options = {});

  const Automaton& automaton() const { return automaton_; }
  const Skeleton& skeleton() const { return skeleton_; }
  int level_count() const { return static_cast<int>(levels_.size()); }
  const Level& level(int d) const { return levels_.at(static_cast<std::size_t>(d)); }

  // Coordinates of q by the tile chain that always takes the first tile containing q.
  Coordinates encode(StateId q) const;
  // The state of a coordinate tuple (any tuple that encodes a tile chain, in particular every
  // reachable one); throws std::invalid_argument for one that does not.
  StateId decode(const Coordinates& coordinates) const;
  // The tile chain a coordinate tuple stands for, as sets of states from Q down to {q}.
  std::vector<std::vector<StateId>> chain(const Coordinates& coordinates) const;

  // The action of letter a on level d given the coordinates of levels 0..d-1 (only those
  // are read). Defined for every upper tuple that is a prefix of a tile chain's coordinates.
  LevelAction act(int d, std::span<const int> upper, LetterId a) const;
  // The cascade step: act() on every level, each reading the old upper coordinates.
  Coordinates apply(const Coordinates& coordinates, LetterId a) const;

  // The complete action tables (when options.build_tables): every coordinate tuple reachable
  // from {encode(q)} under apply, and for each level d the reachable upper tuples (prefixes
  // of length d of reachable tuples) with the action of every letter.
  bool has_tables() const { return tables_built_; }
  const std::vector<Coordinates>& reachable() const;
  // Index into reachable() of apply(reachable()[i], a).
  int successor(std::size_t reachable_index, LetterId a) const;
  struct LevelTable {
    std::vector<Coordinates> upper;                // reachable prefixes, length d
    std::vector<std::vector<LevelAction>> action;  // [upper index][letter]
  };
  const LevelTable& table(int d) const;
  // Index of an upper tuple in table(d).upper, or -1 when it is not reachable.
  int upper_index(int d, std::span<const int> upper) const;

  // Skeleton facts for reports.
  std::size_t image_count() const { return skeleton_.image_count(); }
  std::size_t class_count() const { return skeleton_.class_count(); }
  int skeleton_depth() const { return skeleton_.depth_of_skeleton(); }
  bool solvable() const;  // every holonomy group is solvable
  // Every holonomy group is trivial. By the holonomy theorem this holds exactly when the
  // transformation semigroup is aperiodic (each holonomy group divides S, and S divides the
  // cascade), so it answers without enumerating S.
  bool aperiodic() const;
  // Number of tile chains (an upper bound on reachable(); saturates at 2^64 - 1).
  std::uint64_t chain_count() const { return chain_count_; }

 private:
  // Members of a chain as indices into the skeleton's set family, Q first.
  using Chain = std::vector<std::uint32_t>;
  // Decodes chain members from a coordinate prefix, down to the first member whose depth
  // exceeds the prefix (a singleton for a full tuple).
  Chain decode_chain(std::span<const int> coordinates) const;
  // The chain after letter a: members mapped, repeats dropped, gaps filled with tiles.
  Chain image_chain(const Chain& chain, LetterId a) const;
  Chain state_chain(StateId q) const;
  Coordinates encode_chain(const Chain& chain) const;
  // Level d's action, from the old chain and the new one (both reaching depth >= d + 1).
  LevelAction level_action(int d, const Chain& before, const Chain& after, LetterId a) const;
  int value_of(std::uint32_t member, std::uint32_t tile) const;
  // The steps of compute().
  void add_slots(const DecomposeOptions& options);
  void lay_out_values();
  void count_chains();
  void build_tables(const DecomposeOptions& options);
  // Steps of build_tables: a new tuple's successors, and the actions of its new prefixes.
  class TableBudget;
  int add_tuple(RowIndex& tuples, const Coordinates& tuple, TableBudget& budget);
  void add_successors(RowIndex& tuples, const Chain& chain, std::vector<Chain>& images,
                      TableBudget& budget);
  void add_level_actions(std::span<const int> tuple, const Chain& chain,
                         const std::vector<Chain>& images, TableBudget& budget);

  Automaton automaton_;
  Skeleton skeleton_;
  std::vector<Level> levels_;
  std::vector<int> slot_of_class_;  // class -> slot index on its level, -1 for none
  std::uint64_t chain_count_ = 0;

  bool tables_built_ = false;
  std::vector<Coordinates> reachable_;
  std::vector<int> successor_;  // [reachable index * letters + a]
  std::vector<LevelTable> tables_;
  std::vector<RowIndex> prefix_index_;  // per level d: the upper tuples of length d
};

}  // namespace krc
