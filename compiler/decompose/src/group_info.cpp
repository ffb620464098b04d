#include "krc/decompose/group_info.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace krc {

namespace {

// All elements of a small group, each with a compact key for hashing.
class ElementList {
 public:
  explicit ElementList(const PermGroup& group) : wide_(group.degree() > 255) {
    Permutation one = perm::identity(group.degree());
    add(one);
    for (std::size_t i = 0; i < elements_.size(); ++i)
      for (const auto& g : group.generators()) add(perm::multiply(elements_[i], g));
  }
  const std::vector<Permutation>& elements() const { return elements_; }
  std::size_t index_of(const Permutation& p) const { return index_.at(key(p)); }

 private:
  std::string key(const Permutation& p) const {
    std::string k;
    k.reserve(p.size() * (wide_ ? 2 : 1));
    for (int x : p) {
      k.push_back(static_cast<char>(x & 0xff));
      if (wide_) k.push_back(static_cast<char>((x >> 8) & 0xff));
    }
    return k;
  }
  void add(Permutation p) {
    if (index_.emplace(key(p), elements_.size()).second) elements_.push_back(std::move(p));
  }
  bool wide_;
  std::vector<Permutation> elements_;
  std::unordered_map<std::string, std::size_t> index_;
};

std::vector<std::uint64_t> prime_factors(std::uint64_t n) {
  std::vector<std::uint64_t> primes;
  for (std::uint64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      primes.push_back(p);
      n /= p;
    }
  if (n > 1) primes.push_back(n);
  return primes;
}

std::uint64_t factorial(int n) {
  std::uint64_t f = 1;
  for (int i = 2; i <= n; ++i) {
    if (f > UINT64_MAX / static_cast<std::uint64_t>(i)) return 0;  // 0 = does not fit
    f *= static_cast<std::uint64_t>(i);
  }
  return f;
}

bool is_abelian(const PermGroup& group) {
  const auto& gens = group.generators();
  for (std::size_t i = 0; i < gens.size(); ++i)
    for (std::size_t j = i + 1; j < gens.size(); ++j)
      if (perm::multiply(gens[i], gens[j]) != perm::multiply(gens[j], gens[i])) return false;
  return true;
}

// The group restricted to each of its orbits of size >= 2, as (orbit size, order of the
// restriction) pairs.
std::vector<std::pair<int, std::uint64_t>> orbit_actions(const PermGroup& group) {
  std::vector<std::pair<int, std::uint64_t>> result;
  const int n = group.degree();
  std::vector<int> orbit_of(static_cast<std::size_t>(n), -1);
  for (int start = 0; start < n; ++start) {
    if (orbit_of[static_cast<std::size_t>(start)] >= 0) continue;
    std::vector<int> orbit{start};
    orbit_of[static_cast<std::size_t>(start)] = start;
    for (std::size_t i = 0; i < orbit.size(); ++i)
      for (const auto& g : group.generators()) {
        int next = g[static_cast<std::size_t>(orbit[i])];
        if (orbit_of[static_cast<std::size_t>(next)] < 0) {
          orbit_of[static_cast<std::size_t>(next)] = start;
          orbit.push_back(next);
        }
      }
    if (orbit.size() < 2) continue;
    std::sort(orbit.begin(), orbit.end());
    std::vector<int> local(static_cast<std::size_t>(n), -1);
    for (std::size_t i = 0; i < orbit.size(); ++i)
      local[static_cast<std::size_t>(orbit[i])] = static_cast<int>(i);
    std::vector<Permutation> restricted;
    for (const auto& g : group.generators()) {
      Permutation r(orbit.size());
      for (std::size_t i = 0; i < orbit.size(); ++i)
        r[i] = local[static_cast<std::size_t>(g[static_cast<std::size_t>(orbit[i])])];
      restricted.push_back(std::move(r));
    }
    PermGroup on_orbit(static_cast<int>(orbit.size()), restricted);
    result.emplace_back(static_cast<int>(orbit.size()), on_orbit.order());
  }
  return result;
}

// A_m or S_m in its natural action on one orbit, faithfully: returns m and whether it is
// the alternating group; m = 0 when not.
std::pair<int, bool> natural_symmetric_or_alternating(const PermGroup& group) {
  std::uint64_t order = group.order();
  for (auto [m, restricted_order] : orbit_actions(group)) {
    if (restricted_order != order) continue;  // not faithful on this orbit
    std::uint64_t full = factorial(m);
    if (full == 0) continue;
    if (order == full) return {m, false};
    if (m >= 3 && order == full / 2) return {m, true};
  }
  return {0, false};
}

using OrderStatistics = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

OrderStatistics order_statistics(const std::vector<Permutation>& elements) {
  std::map<std::uint64_t, std::uint64_t> counts;
  for (const auto& e : elements) ++counts[perm::order(e)];
  return {counts.begin(), counts.end()};
}

bool enumerable(const PermGroup& group, std::uint64_t order, const GroupAnalysisOptions& options) {
  return order <= options.max_enumerated_order &&
         order * static_cast<std::uint64_t>(std::max(1, group.degree())) <=
             options.max_enumerated_points;
}

// A maximal normal subgroup of a perfect group H (so H/M is non-abelian simple).
PermGroup maximal_normal_subgroup(const PermGroup& h, const GroupAnalysisOptions& options,
                                  bool& exact) {
  if (natural_symmetric_or_alternating(h).first >= 5)
    return PermGroup(h.degree());  // A_m is simple
  PermGroup m(h.degree());
  std::uint64_t order = h.order();
  auto try_element = [&](const Permutation& g) {
    if (m.contains(g)) return;
    std::vector<Permutation> gens = m.generators();
    gens.push_back(g);
    PermGroup candidate = normal_closure(h, gens);
    if (candidate.order() < order) m = std::move(candidate);
  };
  // Elements in one conjugacy class have the same normal closure: one per class suffices,
  // and one pass suffices because a larger M only makes closures larger.
  if (enumerable(h, order, options)) {
    ElementList list(h);
    const auto& elements = list.elements();
    std::vector<char> seen(elements.size(), 0);
    for (std::size_t i = 0; i < elements.size(); ++i) {
      if (seen[i]) continue;
      std::vector<std::size_t> cls{i};
      seen[i] = 1;
      for (std::size_t j = 0; j < cls.size(); ++j)
        for (const auto& g : h.generators()) {
          std::size_t c = list.index_of(perm::conjugate(elements[cls[j]], g));
          if (!seen[c]) {
            seen[c] = 1;
            cls.push_back(c);
          }
        }
      try_element(elements[i]);
    }
    return m;
  }
  // Too large to enumerate: random elements and their prime-order powers (Monte Carlo).
  exact = false;
  std::mt19937_64 rng(options.seed);
  for (const auto& g : h.generators()) try_element(g);
  for (int trial = 0; trial < 400; ++trial) {
    Permutation g = h.random_element(rng);
    std::uint64_t o = perm::order(g);
    for (std::uint64_t p : prime_factors(o)) {
      Permutation power = perm::identity(h.degree());
      for (std::uint64_t e = 0; e < o / p; ++e) power = perm::multiply(power, g);
      try_element(power);
    }
    try_element(g);
  }
  return m;
}

std::string group_name(const PermGroup& group, std::uint64_t order,
                       const GroupAnalysisOptions& options) {
  if (order == 1) return "1";
  const bool abelian = is_abelian(group);
  const bool small = enumerable(group, order, options);
  std::vector<Permutation> elements;
  if (small) elements = ElementList(group).elements();
  auto count_of_order = [&](std::uint64_t k) {
    return static_cast<std::uint64_t>(
        std::count_if(elements.begin(), elements.end(),
                      [&](const Permutation& e) { return perm::order(e) == k; }));
  };
  const std::string generic = "group of order " + std::to_string(order);
  if (abelian) {
    if (small) {
      if (count_of_order(order) > 0) return "C" + std::to_string(order);
      if (order == 4) return "C2 x C2";
      return generic;
    }
    // Sampling can only prove cyclicity (an element of full order); otherwise stay generic.
    std::mt19937_64 rng(options.seed);
    for (int i = 0; i < 200; ++i)
      if (perm::order(group.random_element(rng)) == order) return "C" + std::to_string(order);
    return generic;
  }
  if (order == 6) return "S3";  // the only non-abelian group of order 6
  // S_m / A_m: order and the statistics of element orders must both match.
  for (int m = 4; m < 21; ++m) {
    std::uint64_t full = factorial(m);
    if (full == 0 || full / 2 > order) break;
    for (bool alternating : {false, true}) {
      if (order != (alternating ? full / 2 : full)) continue;
      std::string name = (alternating ? "A" : "S") + std::to_string(m);
      if (small) {
        if (order_statistics(elements) == symmetric_order_statistics(m, alternating)) return name;
      } else {
        auto [natural, is_alt] = natural_symmetric_or_alternating(group);
        if (natural == m && is_alt == alternating) return name;
      }
    }
  }
  if (!small) return generic;
  if (order == 8 && count_of_order(2) == 1) return "Q8";
  // Dihedral: a cyclic subgroup of index 2 whose complement consists of involutions.
  for (const auto& r : elements) {
    if (perm::order(r) != order / 2 || order % 2 != 0) continue;
    std::set<Permutation> rotations;
    Permutation power = perm::identity(group.degree());
    for (std::uint64_t i = 0; i < order / 2; ++i) {
      rotations.insert(power);
      power = perm::multiply(power, r);
    }
    bool dihedral = std::all_of(elements.begin(), elements.end(), [&](const Permutation& e) {
      return rotations.count(e) > 0 || perm::order(e) == 2;
    });
    if (dihedral) return "D" + std::to_string(order);
    break;  // any element of order |G|/2 generates a cyclic subgroup of index 2; one test is enough
  }
  return generic;
}

}  // namespace

std::vector<std::pair<std::uint64_t, std::uint64_t>> symmetric_order_statistics(int n,
                                                                                bool alternating) {
  std::map<std::uint64_t, std::uint64_t> counts;
  const std::uint64_t total = factorial(n);
  if (total == 0) throw std::invalid_argument("symmetric_order_statistics: n too large");
  // Cycle types are the partitions of n; a type with m_k cycles of length k has
  // n! / prod(k^m_k m_k!) elements, of order lcm(k) and even when n - #cycles is even.
  std::vector<int> parts;
  std::function<void(int, int)> partitions = [&](int rest, int largest) {
    if (rest == 0) {
      std::uint64_t size = total, order = 1;
      std::map<int, int> multiplicity;
      for (int k : parts) ++multiplicity[k];
      for (auto [k, m] : multiplicity) {
        for (int i = 0; i < m; ++i) size /= static_cast<std::uint64_t>(k);
        size /= factorial(m);
        order = std::lcm(order, static_cast<std::uint64_t>(k));
      }
      bool even = (n - static_cast<int>(parts.size())) % 2 == 0;
      if (!alternating || even) counts[order] += size;
      return;
    }
    for (int k = std::min(rest, largest); k >= 1; --k) {
      parts.push_back(k);
      partitions(rest - k, k);
      parts.pop_back();
    }
  };
  partitions(n, n);
  return {counts.begin(), counts.end()};
}

GroupInfo analyze_group(const PermGroup& group, const GroupAnalysisOptions& options) {
  GroupInfo info;
  info.order = group.order();
  // Composition factors: derived series (abelian sections split into primes); at a perfect
  // group, a maximal normal subgroup M gives the non-abelian simple factor H/M.
  // `current` is the group itself at first (not copied), then each maximal normal subgroup.
  PermGroup held(group.degree());
  const PermGroup* current = &group;
  while (!current->is_trivial()) {
    const std::vector<PermGroup> below = derived_series(*current);
    std::uint64_t order = current->order();
    for (const PermGroup& term : below) {
      for (std::uint64_t p : prime_factors(order / term.order())) info.factors.push_back(p);
      order = term.order();
    }
    const PermGroup& perfect = below.empty() ? *current : below.back();
    if (perfect.is_trivial()) break;
    PermGroup m = maximal_normal_subgroup(perfect, options, info.exact);
    info.factors.push_back(order / m.order());
    info.solvable = false;
    held = std::move(m);
    current = &held;
  }
  std::sort(info.factors.begin(), info.factors.end());
  info.name = group_name(group, info.order, options);
  return info;
}

GroupInfo analyze_group(int degree, const std::vector<Permutation>& generators,
                        const GroupAnalysisOptions& options) {
  std::vector<const Permutation*> moving;
  for (const auto& g : generators)
    if (!perm::is_identity(g)) moving.push_back(&g);
  if (moving.size() != 1) return analyze_group(PermGroup(degree, generators), options);
  GroupInfo info;
  info.order = perm::order(*moving.front());
  info.factors = prime_factors(info.order);
  info.name = "C" + std::to_string(info.order);
  return info;
}

}  // namespace krc
