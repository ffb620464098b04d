#include "krc/decompose/perm_group.hpp"

#include <numeric>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"

namespace krc {

namespace perm {
Permutation identity(int degree) {
  Permutation p(static_cast<std::size_t>(degree));
  std::iota(p.begin(), p.end(), 0);
  return p;
}

bool is_identity(const Permutation& p) {
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int>(i)) return false;
  return true;
}

Permutation multiply(const Permutation& first, const Permutation& then) {
  Permutation r(first.size());
  for (std::size_t i = 0; i < first.size(); ++i) r[i] = then[static_cast<std::size_t>(first[i])];
  return r;
}

Permutation inverse(const Permutation& p) {
  Permutation r(p.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    r[static_cast<std::size_t>(p[i])] = static_cast<int>(i);
  return r;
}

Permutation conjugate(const Permutation& p, const Permutation& by) {
  return multiply(multiply(inverse(by), p), by);
}

std::uint64_t order(const Permutation& p) {
  std::vector<char> seen(p.size(), 0);
  std::uint64_t result = 1;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (seen[i]) continue;
    std::uint64_t length = 0;
    for (std::size_t j = i; !seen[j]; j = static_cast<std::size_t>(p[j])) {
      seen[j] = 1;
      ++length;
    }
    result = std::lcm(result, length);
  }
  return result;
}
}  // namespace perm

PermGroup::PermGroup(int degree, const std::vector<Permutation>& generators) : degree_(degree) {
  if (degree < 0) throw std::invalid_argument("PermGroup: negative degree");
  for (const auto& g : generators) add_generator(g);
}

std::uint64_t PermGroup::order() const {
  std::uint64_t result = 1;
  for (const auto& level : levels_) {
    std::uint64_t size = level.orbit.size();
    if (result > UINT64_MAX / size)
      throw LimitError("a holonomy group has more than 2^64 elements");
    result *= size;
  }
  return result;
}

std::vector<int> PermGroup::base() const {
  std::vector<int> b;
  for (const auto& level : levels_) b.push_back(level.point);
  return b;
}

std::vector<std::size_t> PermGroup::basic_orbit_sizes() const {
  std::vector<std::size_t> sizes;
  for (const auto& level : levels_) sizes.push_back(level.orbit.size());
  return sizes;
}

std::pair<Permutation, std::size_t> PermGroup::sift(Permutation p, std::size_t start) const {
  for (std::size_t i = start; i < levels_.size(); ++i) {
    const Level& level = levels_[i];
    int image = p[static_cast<std::size_t>(level.point)];
    int coset = level.coset_of[static_cast<std::size_t>(image)];
    if (coset < 0) return {std::move(p), i};
    p = perm::multiply(p, level.inverse_cosets[static_cast<std::size_t>(coset)]);
  }
  return {std::move(p), levels_.size()};
}

bool PermGroup::contains(const Permutation& p) const {
  if (static_cast<int>(p.size()) != degree_) return false;
  auto [residue, stopped] = sift(p, 0);
  return stopped == levels_.size() && perm::is_identity(residue);
}

void PermGroup::recompute_orbit(std::size_t index) {
  // Every coset costs a permutation of the whole degree: a large orbit of a large degree (a
  // cyclic group on a million tiles) is refused as it grows, not when memory runs out.
  const std::uint64_t per_coset = static_cast<std::uint64_t>(degree_) * sizeof(int) + 32;
  std::uint64_t cosets_elsewhere = 0;
  for (std::size_t l = 0; l < levels_.size(); ++l)
    if (l != index) cosets_elsewhere += levels_[l].inverse_cosets.size();
  const std::uint64_t affordable = memory_budget() / per_coset;
  Level& level = levels_[index];
  level.orbit.assign(1, level.point);
  level.coset_of.assign(static_cast<std::size_t>(degree_), -1);
  level.coset_of[static_cast<std::size_t>(level.point)] = 0;
  level.inverse_cosets.assign(1, perm::identity(degree_));
  std::vector<Permutation> inverse_generators;
  for (const auto& s : level.generators) inverse_generators.push_back(perm::inverse(s));
  for (std::size_t i = 0; i < level.orbit.size(); ++i) {
    for (std::size_t g = 0; g < level.generators.size(); ++g) {
      int next = level.generators[g][static_cast<std::size_t>(level.orbit[i])];
      if (level.coset_of[static_cast<std::size_t>(next)] >= 0) continue;
      if (cosets_elsewhere + level.inverse_cosets.size() >= affordable)
        check_memory("the stabiliser chain of a holonomy group on " + std::to_string(degree_) +
                         " points (an orbit of more than " +
                         std::to_string(level.inverse_cosets.size()) + ")",
                     saturating_mul(cosets_elsewhere + level.inverse_cosets.size() + 1, per_coset));
      level.coset_of[static_cast<std::size_t>(next)] = static_cast<int>(level.orbit.size());
      level.orbit.push_back(next);
      // (u s)^-1 = s^-1 u^-1
      level.inverse_cosets.push_back(
          perm::multiply(inverse_generators[g], level.inverse_cosets[i]));
    }
  }
}

void PermGroup::add_level(const Permutation& moving) {
  for (std::size_t x = 0; x < moving.size(); ++x) {
    if (moving[x] != static_cast<int>(x)) {
      Level level;
      level.point = static_cast<int>(x);
      levels_.push_back(std::move(level));
      return;
    }
  }
  throw std::logic_error("PermGroup: new base point for the identity");
}

void PermGroup::insert_residue(const Permutation& residue, std::size_t from, std::size_t to) {
  if (to == levels_.size()) add_level(residue);
  for (std::size_t l = from; l <= to; ++l) {
    levels_[l].generators.push_back(residue);
    recompute_orbit(l);
  }
  for (std::size_t l = to + 1; l-- > from;) complete(l);
}

// Makes level `index` complete (every Schreier generator sifts), assuming deeper levels are.
void PermGroup::complete(std::size_t index) {
  for (std::size_t i = 0; i < levels_[index].orbit.size(); ++i) {
    const Permutation coset = perm::inverse(levels_[index].inverse_cosets[i]);
    for (std::size_t g = 0; g < levels_[index].generators.size(); ++g) {
      const Level& level = levels_[index];
      const Permutation& s = level.generators[g];
      int image = s[static_cast<std::size_t>(level.orbit[i])];
      Permutation schreier = perm::multiply(perm::multiply(coset, s),
                                            level.inverse_cosets[static_cast<std::size_t>(
                                                level.coset_of[static_cast<std::size_t>(image)])]);
      if (perm::is_identity(schreier)) continue;
      auto [residue, stopped] = sift(std::move(schreier), index + 1);
      if (stopped == levels_.size() && perm::is_identity(residue)) continue;
      insert_residue(residue, index + 1, stopped);
    }
  }
}

bool PermGroup::add_generator(const Permutation& p) {
  if (static_cast<int>(p.size()) != degree_)
    throw std::invalid_argument("PermGroup: permutation of the wrong degree");
  auto [residue, stopped] = sift(p, 0);
  if (stopped == levels_.size() && perm::is_identity(residue)) return false;
  generators_.push_back(p);
  insert_residue(residue, 0, stopped);
  return true;
}

Permutation PermGroup::random_element(std::mt19937_64& rng) const {
  Permutation result = perm::identity(degree_);
  for (std::size_t l = levels_.size(); l-- > 0;) {
    const Level& level = levels_[l];
    std::uniform_int_distribution<std::size_t> pick(0, level.inverse_cosets.size() - 1);
    result = perm::multiply(result, perm::inverse(level.inverse_cosets[pick(rng)]));
  }
  return result;
}

PermGroup normal_closure(const PermGroup& group, const std::vector<Permutation>& elements) {
  PermGroup closure(group.degree());
  std::vector<Permutation> pending(elements.begin(), elements.end());
  while (!pending.empty()) {
    Permutation x = std::move(pending.back());
    pending.pop_back();
    if (!closure.add_generator(x)) continue;
    for (const auto& g : group.generators()) pending.push_back(perm::conjugate(x, g));
  }
  return closure;
}

PermGroup derived_subgroup(const PermGroup& group) {
  std::vector<Permutation> commutators;
  const auto& gens = group.generators();
  for (std::size_t i = 0; i < gens.size(); ++i)
    for (std::size_t j = i + 1; j < gens.size(); ++j) {
      Permutation c = perm::multiply(perm::multiply(perm::inverse(gens[i]), perm::inverse(gens[j])),
                                     perm::multiply(gens[i], gens[j]));
      if (!perm::is_identity(c)) commutators.push_back(std::move(c));
    }
  return normal_closure(group, commutators);
}

std::vector<PermGroup> derived_series(const PermGroup& group) {
  std::vector<PermGroup> below;
  const PermGroup* last = &group;
  while (!last->is_trivial()) {
    PermGroup next = derived_subgroup(*last);
    if (next.order() == last->order()) break;  // perfect: [D, D] = D
    below.push_back(std::move(next));
    last = &below.back();
  }
  return below;
}

}  // namespace krc
