#include "krc/decompose/holonomy.hpp"

#include <algorithm>
#include <new>
#include <set>
#include <stdexcept>
#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"

namespace krc {

HolonomyDecomposition HolonomyDecomposition::compute(const Automaton& automaton,
                                                     const DecomposeOptions& options) {
  // Named in every refusal of its stages, whichever command decomposes (issue 31).
  const MemoryPhase phase("decomposing (holonomy)");
  try {
    HolonomyDecomposition h;
    h.automaton_ = automaton;
    h.skeleton_ = Skeleton::compute(automaton, options);
    h.add_slots(options);
    h.lay_out_values();
    h.count_chains();
    if (options.build_tables) h.build_tables(options);
    return h;
  } catch (const std::bad_alloc&) {
    throw LimitError("out of memory while decomposing '" + automaton.name() + "'");
  }
}

// Slots: one per non-singleton class representative, on the level of its depth, in class
// order. Holonomy group generators: every round trip inside the class.
void HolonomyDecomposition::add_slots(const DecomposeOptions& options) {
  const Skeleton& sk = skeleton_;
  levels_.resize(static_cast<std::size_t>(sk.level_count()));
  slot_of_class_.assign(sk.class_count(), -1);
  GroupAnalysisOptions group_options;
  group_options.max_enumerated_order = options.max_enumerated_group_order;
  std::vector<int> round_trip;
  for (std::size_t c = 0; c < sk.class_count(); ++c) {
    const int cls = static_cast<int>(c);
    if (sk.is_singleton_class(cls)) continue;
    Level& level = levels_[static_cast<std::size_t>(sk.class_depth(cls) - 1)];
    slot_of_class_[c] = static_cast<int>(level.slots.size());
    Slot slot;
    slot.subduction_class = cls;
    const std::size_t rep = sk.representative(cls);
    slot.representative = sk.states_of(rep);
    for (std::uint32_t t : sk.tiles(rep)) slot.tiles.push_back(sk.states_of(t));
    std::set<std::vector<int>> generators;
    for (std::size_t member : sk.class_members(cls))
      for (LetterId a = 0; a < sk.letter_count(); ++a)
        if (sk.round_trip(member, a, round_trip) && !perm::is_identity(round_trip))
          generators.insert(round_trip);
    slot.generators.assign(generators.begin(), generators.end());
    slot.group = analyze_group(static_cast<int>(slot.tiles.size()), slot.generators, group_options);
    level.slots.push_back(std::move(slot));
  }
}

// Each level's values: its slots' tiles in order, then the dummy when needed. A level needs a
// dummy value when some tile chain jumps over it: a set whose tile lies deeper than the next
// level. Every set of E lies on some chain from Q, and the tiles of a class's members lie in
// the classes of its representative's tiles.
void HolonomyDecomposition::lay_out_values() {
  const Skeleton& sk = skeleton_;
  std::vector<char> skipped(levels_.size(), 0);
  for (std::size_t c = 0; c < sk.class_count(); ++c) {
    if (sk.is_singleton_class(static_cast<int>(c))) continue;
    std::size_t rep = sk.representative(static_cast<int>(c));
    for (std::uint32_t t : sk.tiles(rep))
      for (int d = sk.depth(rep) + 1; d < sk.depth(t); ++d)
        skipped[static_cast<std::size_t>(d - 1)] = 1;
  }
  for (std::size_t d = 0; d < levels_.size(); ++d) {
    Level& level = levels_[d];
    for (std::size_t s = 0; s < level.slots.size(); ++s) {
      level.first_value.push_back(level.width);
      for (std::size_t t = 0; t < level.slots[s].tiles.size(); ++t) {
        level.slot_of.push_back(static_cast<int>(s));
        level.tile_of.push_back(static_cast<int>(t));
        ++level.width;
      }
    }
    if (skipped[d]) {
      level.dummy = level.width++;
      level.slot_of.push_back(-1);
      level.tile_of.push_back(-1);
    }
  }
}

// Tile chains from each set down to singletons, smallest sets first.
void HolonomyDecomposition::count_chains() {
  const Skeleton& sk = skeleton_;
  std::vector<std::uint32_t> by_size(sk.set_count());
  for (std::size_t e = 0; e < by_size.size(); ++e) by_size[e] = static_cast<std::uint32_t>(e);
  std::stable_sort(by_size.begin(), by_size.end(), [&](std::uint32_t a, std::uint32_t b) {
    return sk.sets().cardinality(a) < sk.sets().cardinality(b);
  });
  std::vector<std::uint64_t> chains(sk.set_count(), 0);
  for (std::uint32_t e : by_size) {
    if (sk.is_singleton(e)) {
      chains[e] = 1;
      continue;
    }
    for (std::uint32_t t : sk.tiles(e)) chains[e] = saturating_add(chains[e], chains[t]);
  }
  chain_count_ = chains[0];
}

bool HolonomyDecomposition::solvable() const {
  for (const auto& level : levels_)
    for (const auto& slot : level.slots)
      if (!slot.group.solvable) return false;
  return true;
}

bool HolonomyDecomposition::aperiodic() const {
  for (const auto& level : levels_)
    for (const auto& slot : level.slots)
      if (slot.group.order != 1) return false;
  return true;
}

int HolonomyDecomposition::value_of(std::uint32_t member, std::uint32_t tile) const {
  const int depth = skeleton_.depth(member);
  const Level& level = levels_[static_cast<std::size_t>(depth - 1)];
  const int slot = slot_of_class_[static_cast<std::size_t>(skeleton_.class_of(member))];
  const int position = skeleton_.tile_position(member, tile);
  if (position < 0) throw std::logic_error("holonomy: a chain member's successor is not its tile");
  return level.first_value[static_cast<std::size_t>(slot)] + position;
}

HolonomyDecomposition::Chain HolonomyDecomposition::decode_chain(
    std::span<const int> coordinates) const {
  Chain chain{0};  // Q is the first set of the orbit
  for (;;) {
    const std::uint32_t member = chain.back();
    if (skeleton_.is_singleton(member)) break;
    const int depth = skeleton_.depth(member);
    if (static_cast<std::size_t>(depth) > coordinates.size()) break;
    const Level& level = levels_[static_cast<std::size_t>(depth - 1)];
    const int value = coordinates[static_cast<std::size_t>(depth - 1)];
    const int slot = slot_of_class_[static_cast<std::size_t>(skeleton_.class_of(member))];
    if (value < 0 || value >= level.width || level.slot_of[static_cast<std::size_t>(value)] != slot)
      throw std::invalid_argument("holonomy: coordinate " + std::to_string(value) + " at level " +
                                  std::to_string(depth) + " is not a tile of the chain's set");
    chain.push_back(skeleton_.tiles(
        member)[static_cast<std::size_t>(level.tile_of[static_cast<std::size_t>(value)])]);
  }
  return chain;
}

HolonomyDecomposition::Chain HolonomyDecomposition::image_chain(const Chain& chain,
                                                                LetterId a) const {
  Chain image{0};
  for (std::uint32_t member : chain) {
    const auto mapped = static_cast<std::uint32_t>(skeleton_.successor(member, a));
    if (mapped == image.back()) continue;
    // mapped is a proper subset of image.back(): descend through tiles containing it.
    while (skeleton_.tile_position(image.back(), mapped) < 0)
      image.push_back(static_cast<std::uint32_t>(skeleton_.tile_containing(image.back(), mapped)));
    image.push_back(mapped);
  }
  return image;
}

HolonomyDecomposition::Chain HolonomyDecomposition::state_chain(StateId q) const {
  const auto target = static_cast<std::uint32_t>(skeleton_.singleton(q));
  Chain chain{0};
  while (chain.back() != target)
    chain.push_back(static_cast<std::uint32_t>(skeleton_.tile_containing(chain.back(), target)));
  return chain;
}

Coordinates HolonomyDecomposition::encode_chain(const Chain& chain) const {
  Coordinates coordinates(levels_.size());
  for (std::size_t d = 0; d < levels_.size(); ++d) coordinates[d] = levels_[d].dummy;
  for (std::size_t i = 0; i + 1 < chain.size(); ++i)
    coordinates[static_cast<std::size_t>(skeleton_.depth(chain[i]) - 1)] =
        value_of(chain[i], chain[i + 1]);
  return coordinates;
}

Coordinates HolonomyDecomposition::encode(StateId q) const {
  if (q >= automaton_.state_count()) throw std::invalid_argument("holonomy: no such state");
  return encode_chain(state_chain(q));
}

StateId HolonomyDecomposition::decode(const Coordinates& coordinates) const {
  if (coordinates.size() != levels_.size())
    throw std::invalid_argument("holonomy: a coordinate tuple needs one value per level");
  Chain chain = decode_chain(coordinates);
  // Skipped levels must hold the dummy: re-encoding the chain must give the tuple back.
  if (encode_chain(chain) != coordinates)
    throw std::invalid_argument("holonomy: the coordinates do not encode a tile chain");
  return skeleton_.states_of(chain.back()).front();
}

std::vector<std::vector<StateId>> HolonomyDecomposition::chain(
    const Coordinates& coordinates) const {
  decode(coordinates);  // validates
  std::vector<std::vector<StateId>> sets;
  for (std::uint32_t member : decode_chain(coordinates))
    sets.push_back(skeleton_.states_of(member));
  return sets;
}

LevelAction HolonomyDecomposition::level_action(int d, const Chain& before, const Chain& after,
                                                LetterId a) const {
  const int depth = d + 1;
  auto member_at = [&](const Chain& chain) -> int {
    for (std::size_t i = 0; i < chain.size(); ++i) {
      int member_depth = skeleton_.depth(chain[i]);
      if (member_depth == depth) return static_cast<int>(i);
      if (member_depth > depth) break;  // depths increase along a chain
    }
    return -1;
  };
  const Level& level = levels_[static_cast<std::size_t>(d)];
  LevelAction action;
  const int new_index = member_at(after);
  if (new_index < 0) {  // the new chain jumps over this level
    action.reset = true;
    action.reset_to = level.dummy;
    return action;
  }
  const std::uint32_t member = after[static_cast<std::size_t>(new_index)];
  const int old_index = member_at(before);
  if (old_index >= 0 &&
      skeleton_.successor(before[static_cast<std::size_t>(old_index)], a) == member) {
    // The letter moves the old set onto the new one inside its class: permute the tiles.
    action.slot = slot_of_class_[static_cast<std::size_t>(skeleton_.class_of(member))];
    skeleton_.round_trip(before[static_cast<std::size_t>(old_index)], a, action.permutation);
    return action;
  }
  action.reset = true;
  action.reset_to = value_of(member, after[static_cast<std::size_t>(new_index) + 1]);
  return action;
}

LevelAction HolonomyDecomposition::act(int d, std::span<const int> upper, LetterId a) const {
  if (d < 0 || d >= level_count()) throw std::invalid_argument("holonomy: no such level");
  if (upper.size() != static_cast<std::size_t>(d))
    throw std::invalid_argument("holonomy: act() needs the coordinates of the levels above");
  if (a >= automaton_.letter_count()) throw std::invalid_argument("holonomy: no such letter");
  Chain before = decode_chain(upper);
  return level_action(d, before, image_chain(before, a), a);
}

Coordinates HolonomyDecomposition::apply(const Coordinates& coordinates, LetterId a) const {
  if (coordinates.size() != levels_.size())
    throw std::invalid_argument("holonomy: a coordinate tuple needs one value per level");
  Coordinates next(coordinates.size());
  for (std::size_t d = 0; d < levels_.size(); ++d) {
    LevelAction action = act(static_cast<int>(d), std::span<const int>(coordinates).first(d), a);
    if (action.reset) {
      next[d] = action.reset_to;
      continue;
    }
    const Level& level = levels_[d];
    const int value = coordinates[d];
    if (value < 0 || value >= level.width ||
        level.slot_of[static_cast<std::size_t>(value)] != action.slot)
      throw std::invalid_argument("holonomy: coordinate outside the permuted slot");
    next[d] =
        level.first_value[static_cast<std::size_t>(action.slot)] +
        action
            .permutation[static_cast<std::size_t>(level.tile_of[static_cast<std::size_t>(value)])];
  }
  return next;
}

}  // namespace krc
