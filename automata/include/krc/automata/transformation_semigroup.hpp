#pragma once
// The transformation semigroup S = <delta(., a) : a in letters> of an automaton, and the
// monoid S u {1}, enumerated element by element.
//
// Letters act on the right and so do products: f * g means "first f, then g", so
// (f * g)[q] = g[f[q]] and the element of a word a1 a2 ... ak is delta(., a1) * ... * delta(., ak).
//
// Enumeration is a breadth-first search of the right Cayley graph (element x letter ->
// element). Elements are stored back to back in one array of the narrowest integer type that
// holds a state (so T_7's 823,543 elements take under 6 MB), found again through an
// open-addressing hash table of indices, and the Cayley graph and the BFS tree are kept, so
// right multiplication is a table lookup and every element has a shortest word.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc {

// What callers use unless the user raises it: enough for T_7 (823,543 elements).
inline constexpr std::size_t kDefaultMaxSemigroupElements = 1'000'000;

class TransformationSemigroup {
 public:
  using ElementId = std::uint32_t;

  // Enumerates S (with_identity = false: the elements of the non-empty words) or the monoid
  // S u {1} (with_identity = true: element 0 is the identity, the element of the empty word).
  // Throws krc::LimitError when there are more than max_elements elements, or when storing them
  // would take more than max_bytes bytes.
  static TransformationSemigroup generate(const Automaton& automaton, bool with_identity = false,
                                          std::size_t max_elements = kDefaultMaxSemigroupElements,
                                          std::size_t max_bytes = std::size_t{2} << 30);

  std::size_t size() const { return parent_.size(); }  // elements stored
  std::size_t degree() const { return degree_; }       // number of states
  std::size_t letter_count() const { return letters_; }
  bool with_identity() const { return with_identity_; }

  // |S|, the elements of the non-empty words, and |S u {1}|, whichever was enumerated.
  std::size_t semigroup_size() const;
  std::size_t monoid_size() const;
  // Whether some non-empty word acts as the identity (then S is already a monoid).
  bool identity_in_semigroup() const { return identity_in_semigroup_; }

  // The transformation of element i (image[q] = where q goes).
  Transformation element(ElementId i) const;
  StateId image(ElementId i, StateId q) const;
  std::optional<ElementId> index_of(std::span<const StateId> transformation) const;
  // The index of the identity transformation, if it is stored (always element 0 with_identity).
  std::optional<ElementId> identity() const { return identity_; }

  // The element of the one-letter word a.
  ElementId letter_element(LetterId a) const { return letter_element_.at(a); }
  // element(i) * delta(., a), from the stored Cayley graph.
  ElementId right_multiply(ElementId i, LetterId a) const {
    return cayley_[std::size_t{i} * letters_ + a];
  }
  // element(i) * element(j): first i, then j.
  ElementId multiply(ElementId i, ElementId j) const;
  // Row i of the multiplication table: element(i) * element(j) for every j, walked along the
  // BFS tree (j = parent(j) * letter), so a row costs size() lookups in the Cayley graph instead
  // of size() compositions of degree() states and as many hash probes. A 10,539-state
  // prefix-tree acceptor's 3,000-element monoid took minutes the other way.
  std::vector<ElementId> multiply_row(ElementId i) const;
  // A shortest word whose element is i (empty only for the adjoined identity), from the BFS tree.
  std::vector<LetterId> shortest_word(ElementId i) const;

  bool is_permutation(ElementId i) const;
  std::size_t rank(ElementId i) const;  // size of the image
  bool is_idempotent(ElementId i) const;

  // No nontrivial subgroup: x^n = x^(n+1) for every element, i.e. no element's functional graph
  // has a cycle longer than 1.
  bool is_aperiodic() const;
  // The elements that are permutations of all the states (with_identity: the group of units
  // of the monoid; otherwise the permutations in S, a group when there are any).
  std::size_t group_of_units_order() const;
  // Every element is a permutation: S (and the monoid) is a group.
  bool is_group() const;

 private:
  template <class Entry>
  friend class SemigroupEnumerator;
  using Storage = std::variant<std::vector<std::uint8_t>, std::vector<std::uint16_t>,
                               std::vector<std::uint32_t>>;

  std::size_t degree_ = 0, letters_ = 0;
  bool with_identity_ = false, identity_in_semigroup_ = false;
  Storage elements_;               // size() * degree() entries
  std::vector<ElementId> cayley_;  // size() * letter_count(): right multiplication table
  std::vector<ElementId> parent_;  // BFS tree: element = parent * parent_letter
  std::vector<LetterId> parent_letter_;
  std::vector<ElementId> letter_element_;
  std::optional<ElementId> identity_;
  // Open addressing, power-of-two capacity; a slot holds (element + 1, hash bits), 0 = empty.
  struct Slot {
    std::uint32_t element_plus_one = 0;
    std::uint32_t hash = 0;
  };
  std::vector<Slot> table_;
};

}  // namespace krc
