#pragma once
// Permutation groups on {0..degree-1} by a base and strong generating set (deterministic
// Schreier-Sims): order, membership, uniform random elements, normal closures and the
// derived subgroup. Permutations act on the right: (p*q)[x] = q[p[x]].
#include <cstdint>
#include <random>
#include <vector>

namespace krc {

using Permutation = std::vector<int>;

namespace perm {
Permutation identity(int degree);
bool is_identity(const Permutation& p);
Permutation multiply(const Permutation& first, const Permutation& then);  // first, then `then`
Permutation inverse(const Permutation& p);
Permutation conjugate(const Permutation& p, const Permutation& by);  // by^-1 * p * by
std::uint64_t order(const Permutation& p);                           // lcm of the cycle lengths
}  // namespace perm

class PermGroup {
 public:
  explicit PermGroup(int degree, const std::vector<Permutation>& generators = {});

  int degree() const { return degree_; }
  // The generators given or added (non-identity ones only).
  const std::vector<Permutation>& generators() const { return generators_; }
  // Throws krc::LimitError when the order does not fit in 64 bits.
  std::uint64_t order() const;
  bool is_trivial() const { return levels_.empty(); }
  bool contains(const Permutation& p) const;
  // Adds p to the generators; false (and no change) when p is already in the group.
  bool add_generator(const Permutation& p);
  // Uniformly distributed: a random coset representative at each level of the chain.
  Permutation random_element(std::mt19937_64& rng) const;
  // Base points and basic orbit sizes of the stabiliser chain.
  std::vector<int> base() const;
  std::vector<std::size_t> basic_orbit_sizes() const;

 private:
  struct Level {
    int point;
    std::vector<Permutation> generators;  // strong generators fixing the earlier base points
    std::vector<int> orbit;
    std::vector<int> coset_of;  // point -> index into the orbit, -1 outside it
    // The inverse of the coset representative that maps `point` to orbit[i] (sifting needs
    // the inverses; the representatives themselves are recomputed when needed).
    std::vector<Permutation> inverse_cosets;
  };
  // Sifts p through levels from `start`: the residue and the level where it stopped.
  std::pair<Permutation, std::size_t> sift(Permutation p, std::size_t start) const;
  void recompute_orbit(std::size_t level);
  void add_level(const Permutation& moving);
  void complete(std::size_t level);
  void insert_residue(const Permutation& residue, std::size_t from, std::size_t to);

  int degree_;
  std::vector<Permutation> generators_;
  std::vector<Level> levels_;
};

// The smallest normal subgroup of `group` containing `elements`.
PermGroup normal_closure(const PermGroup& group, const std::vector<Permutation>& elements);
// [G, G], the normal closure of the commutators of the generators.
PermGroup derived_subgroup(const PermGroup& group);
// The derived series below G: D_1 > D_2 > ... > D_m, D_{i+1} = [D_i, D_i] (D_0 = G, not copied:
// a large group's chain is big), down to D_m trivial (G is solvable) or perfect
// (D_m = [D_m, D_m] != 1: G is not). The one place krc computes it: the group report's
// composition factors and the backend's counters both read it.
std::vector<PermGroup> derived_series(const PermGroup& group);

}  // namespace krc
