// Permutation groups: Schreier-Sims against brute-force enumeration, and the group analysis
// (composition factors, solvability, names) against groups whose structure is textbook.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "krc/decompose/group_info.hpp"
#include "krc/decompose/perm_group.hpp"

using krc::PermGroup;
using krc::Permutation;
namespace perm = krc::perm;

namespace {

std::set<Permutation> enumerate(int degree, const std::vector<Permutation>& generators) {
  std::set<Permutation> elements{perm::identity(degree)};
  std::vector<Permutation> queue{perm::identity(degree)};
  for (std::size_t i = 0; i < queue.size(); ++i)
    for (const auto& g : generators) {
      Permutation next = perm::multiply(queue[i], g);
      if (elements.insert(next).second) queue.push_back(next);
    }
  return elements;
}

Permutation random_permutation(std::mt19937_64& rng, int degree) {
  Permutation p = perm::identity(degree);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

// Permutation of {0..n-1} from disjoint cycles.
Permutation cycles(int degree, const std::vector<std::vector<int>>& cs) {
  Permutation p = perm::identity(degree);
  for (const auto& c : cs)
    for (std::size_t i = 0; i < c.size(); ++i)
      p[static_cast<std::size_t>(c[i])] = c[(i + 1) % c.size()];
  return p;
}

std::vector<Permutation> symmetric(int n) {
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  return {cycles(n, {all}), cycles(n, {{0, 1}})};
}

std::vector<Permutation> alternating(int n) {  // 3-cycles (0 1 k) generate A_n
  std::vector<Permutation> gens;
  for (int k = 2; k < n; ++k) gens.push_back(cycles(n, {{0, 1, k}}));
  return gens;
}

std::vector<Permutation> dihedral(int n) {  // symmetries of an n-gon
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  Permutation flip = perm::identity(n);
  for (int i = 0; i < n; ++i) flip[static_cast<std::size_t>(i)] = (n - i) % n;
  return {cycles(n, {all}), flip};
}

// Two copies of A5 acting on {0..4} and {5..9}.
std::vector<Permutation> a5_times_a5() {
  std::vector<Permutation> gens;
  for (int offset : {0, 5})
    for (int k = 2; k < 5; ++k) gens.push_back(cycles(10, {{offset, offset + 1, offset + k}}));
  return gens;
}

krc::GroupInfo analyze(int degree, const std::vector<Permutation>& gens,
                       krc::GroupAnalysisOptions options = {}) {
  return krc::analyze_group(PermGroup(degree, gens), options);
}

using Factors = std::vector<std::uint64_t>;

}  // namespace

TEST_CASE("Schreier-Sims order and membership agree with enumeration") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    int degree = std::uniform_int_distribution<int>(1, 7)(rng);
    int count = std::uniform_int_distribution<int>(0, 3)(rng);
    std::vector<Permutation> gens;
    for (int i = 0; i < count; ++i) {
      Permutation p = random_permutation(rng, degree);
      // Sparse permutations too, so that small subgroups turn up.
      if (trial % 2)
        p = perm::identity(degree), std::swap(p[0], p[static_cast<std::size_t>(degree - 1)]);
      gens.push_back(p);
    }
    PermGroup g(degree, gens);
    auto elements = enumerate(degree, gens);
    CHECK(g.order() == elements.size());
    for (int i = 0; i < 20; ++i) {
      Permutation p = random_permutation(rng, degree);
      CHECK(g.contains(p) == (elements.count(p) == 1));
      CHECK(elements.count(g.random_element(rng)) == 1);
    }
  }
}

TEST_CASE("derived subgroup and normal closure agree with enumeration") {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 40; ++trial) {
    int degree = std::uniform_int_distribution<int>(2, 6)(rng);
    std::vector<Permutation> gens{random_permutation(rng, degree), random_permutation(rng, degree)};
    auto elements = enumerate(degree, gens);
    std::set<Permutation> commutators;
    for (const auto& x : elements)
      for (const auto& y : elements)
        commutators.insert(perm::multiply(perm::multiply(perm::inverse(x), perm::inverse(y)),
                                          perm::multiply(x, y)));
    auto derived = enumerate(degree, {commutators.begin(), commutators.end()});
    CHECK(krc::derived_subgroup(PermGroup(degree, gens)).order() == derived.size());
    // The normal closure of one element: the group its conjugates generate.
    Permutation x = *std::next(elements.begin(), static_cast<long>(elements.size() / 2));
    std::set<Permutation> conjugates;
    for (const auto& y : elements) conjugates.insert(perm::conjugate(x, y));
    CHECK(krc::normal_closure(PermGroup(degree, gens), {x}).order() ==
          enumerate(degree, {conjugates.begin(), conjugates.end()}).size());
  }
}

TEST_CASE("symmetric and alternating groups: orders, factors, names") {
  CHECK(analyze(2, symmetric(2)).name == "C2");
  auto s3 = analyze(3, symmetric(3));
  CHECK(s3.name == "S3");
  CHECK(s3.factors == Factors{2, 3});
  auto s4 = analyze(4, symmetric(4));
  CHECK(s4.name == "S4");
  CHECK(s4.factors == Factors{2, 2, 2, 3});
  CHECK(s4.solvable);
  auto a4 = analyze(4, alternating(4));
  CHECK(a4.name == "A4");
  CHECK(a4.factors == Factors{2, 2, 3});
  auto a5 = analyze(5, alternating(5));
  CHECK(a5.name == "A5");
  CHECK(a5.factors == Factors{60});
  CHECK_FALSE(a5.solvable);
  auto s5 = analyze(5, symmetric(5));
  CHECK(s5.name == "S5");
  CHECK(s5.factors == Factors{2, 60});
  auto s8 = analyze(8, symmetric(8));
  CHECK(s8.order == 40320);
  CHECK(s8.name == "S8");
  CHECK(s8.factors == Factors{2, 20160});
  // Beyond the enumeration limit: names from the natural action, factors still exact.
  auto s9 = analyze(9, symmetric(9));
  CHECK(s9.order == 362880);
  CHECK(s9.name == "S9");
  CHECK(s9.factors == Factors{2, 181440});
  CHECK(s9.exact);
  auto a7 = analyze(7, alternating(7));
  CHECK(a7.name == "A7");
  CHECK(a7.factors == Factors{2520});
}

TEST_CASE("small groups get GAP's names") {
  CHECK(analyze(3, {}).name == "1");
  CHECK(analyze(3, {}).factors.empty());
  CHECK(analyze(4, {cycles(4, {{0, 1, 2, 3}})}).name == "C4");
  CHECK(analyze(4, {cycles(4, {{0, 1, 2, 3}})}).factors == Factors{2, 2});
  CHECK(analyze(5, {cycles(5, {{0, 1, 2}, {3, 4}})}).name == "C6");
  CHECK(analyze(5, {cycles(5, {{0, 1, 2}, {3, 4}})}).factors == Factors{2, 3});
  auto klein = analyze(4, {cycles(4, {{0, 1}, {2, 3}}), cycles(4, {{0, 2}, {1, 3}})});
  CHECK(klein.name == "C2 x C2");
  CHECK(klein.factors == Factors{2, 2});
  CHECK(analyze(4, dihedral(4)).name == "D8");
  CHECK(analyze(5, dihedral(5)).name == "D10");
  CHECK(analyze(6, dihedral(6)).name == "D12");
  CHECK(analyze(6, dihedral(6)).factors == Factors{2, 2, 3});
  CHECK(analyze(3, dihedral(3)).name == "S3");
  // Q8 acting on itself: 1, i, j, k, -1, -i, -j, -k as 0..7; right multiplication by i and j.
  Permutation by_i{1, 4, 3, 6, 5, 0, 7, 2}, by_j{2, 7, 4, 1, 6, 3, 0, 5};
  auto q8 = analyze(8, {by_i, by_j});
  CHECK(q8.order == 8);
  CHECK(q8.name == "Q8");
  CHECK(q8.factors == Factors{2, 2, 2});
  // C2 x C4 is none of the named families.
  CHECK(analyze(6, {cycles(6, {{0, 1}}), cycles(6, {{2, 3, 4, 5}})}).name == "group of order 8");
}

TEST_CASE("a direct product of two A5: two simple factors, found by classes or by sampling") {
  auto exact = analyze(10, a5_times_a5());
  CHECK(exact.order == 3600);
  CHECK(exact.factors == Factors{60, 60});
  CHECK_FALSE(exact.solvable);
  CHECK(exact.exact);
  CHECK(exact.name == "group of order 3600");
  krc::GroupAnalysisOptions tiny;
  tiny.max_enumerated_order = 100;
  auto sampled = analyze(10, a5_times_a5(), tiny);
  CHECK(sampled.factors == Factors{60, 60});
  CHECK_FALSE(sampled.exact);
}

TEST_CASE("element order statistics of S_n and A_n match enumeration") {
  for (int n = 1; n <= 6; ++n) {
    std::map<std::uint64_t, std::uint64_t> all, even;
    Permutation p = perm::identity(n);
    do {
      std::uint64_t o = perm::order(p);
      ++all[o];
      // parity by counting inversions
      int inversions = 0;
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
          inversions += p[static_cast<std::size_t>(i)] > p[static_cast<std::size_t>(j)];
      if (inversions % 2 == 0) ++even[o];
    } while (std::next_permutation(p.begin(), p.end()));
    using Stats = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
    CHECK(krc::symmetric_order_statistics(n, false) == Stats(all.begin(), all.end()));
    CHECK(krc::symmetric_order_statistics(n, true) == Stats(even.begin(), even.end()));
  }
}

TEST_CASE("a single generator is analysed as cyclic, as the full analysis finds") {
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 200; ++trial) {
    int degree = std::uniform_int_distribution<int>(1, 12)(rng);
    Permutation p = random_permutation(rng, degree);
    auto quick = krc::analyze_group(degree, {p, perm::identity(degree)});
    auto full = krc::analyze_group(PermGroup(degree, {p}));
    CHECK(quick.order == full.order);
    CHECK(quick.factors == full.factors);
    CHECK(quick.name == full.name);
    CHECK(quick.solvable);
  }
}

TEST_CASE("derived series: textbook lengths and orders, stopping at a perfect group") {
  auto orders = [](int degree, const std::vector<Permutation>& gens) {
    std::vector<std::uint64_t> out;
    for (const PermGroup& term : krc::derived_series(PermGroup(degree, gens)))
      out.push_back(term.order());
    return out;
  };
  // S4 > A4 > V4 > 1 (derived length 3).
  CHECK(orders(4, symmetric(4)) == Factors{12, 4, 1});
  // S3 > C3 > 1; D8 (the square's symmetries) > C2 > 1.
  CHECK(orders(3, symmetric(3)) == Factors{3, 1});
  CHECK(orders(4, dihedral(4)) == Factors{2, 1});
  // An abelian group: one step to 1; the trivial group: nothing below it.
  CHECK(orders(5, {cycles(5, {{0, 1, 2, 3, 4}})}) == Factors{1});
  CHECK(orders(3, {}).empty());
  // A5 is perfect: no term below it. S5 > A5, then stops (A5 = [A5, A5] is not trivial).
  CHECK(orders(5, alternating(5)).empty());
  CHECK(orders(5, symmetric(5)) == Factors{60});
  // The derived subgroup of S4 is exactly A4: the even permutations.
  const auto series = krc::derived_series(PermGroup(4, symmetric(4)));
  for (const auto& p : enumerate(4, symmetric(4))) {
    int inversions = 0;
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) inversions += p[i] > p[j];
    CHECK(series.front().contains(p) == (inversions % 2 == 0));
  }
}
