#include "krc/automata/zoo.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <unordered_map>

#include "krc/automata/input_error.hpp"

namespace krc {

namespace {

// The parts of an automaton, filled by a family's generator.
struct Parts {
  std::vector<std::string> states, letters;
  std::vector<std::vector<StateId>> delta;  // delta[a][q]
  StateId initial = 0;
};

std::vector<std::string> numbered(int n, const std::string& prefix = "") {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

// delta[a][q] = step(q, a) for every letter and state.
template <class Step>
std::vector<std::vector<StateId>> table(std::size_t states, std::size_t letters, Step step) {
  std::vector<std::vector<StateId>> delta(letters, std::vector<StateId>(states));
  for (std::size_t a = 0; a < letters; ++a)
    for (std::size_t q = 0; q < states; ++q)
      delta[a][q] = static_cast<StateId>(step(static_cast<StateId>(q), static_cast<LetterId>(a)));
  return delta;
}

Parts parity() {
  Parts p;
  p.states = {"even", "odd"};
  p.letters = {"0", "1"};
  p.delta = table(2, 2, [](StateId q, LetterId a) { return q ^ a; });
  return p;
}

// Z_n: letter "1" adds one mod n, letter "0" is the identity.
Parts cyclic(int n) {
  Parts p;
  p.states = numbered(n);
  p.letters = {"0", "1"};
  p.delta = table(n, 2, [n](StateId q, LetterId a) { return (q + a) % static_cast<StateId>(n); });
  return p;
}

// D_2n: a car on a ring of n stations, facing clockwise (cw) or counter-clockwise (ccw).
// "drive" moves one station in the facing direction, "toggle" turns the car around.
Parts dihedral(int n) {
  Parts p;
  p.states = numbered(n, "cw");
  for (const auto& s : numbered(n, "ccw")) p.states.push_back(s);
  p.letters = {"toggle", "drive"};
  const StateId m = static_cast<StateId>(n);
  p.delta = table(2 * n, 2, [m](StateId q, LetterId a) -> StateId {
    bool clockwise = q < m;
    StateId station = q % m;
    if (a == 0) return clockwise ? q + m : q - m;
    return clockwise ? (station + 1) % m : m + (station + m - 1) % m;
  });
  return p;
}

// Q8 = {+-1, +-i, +-j, +-k}; letters are right multiplication by 1, i, j, k.
Parts quaternion() {
  // unit[x][y] = (sign, unit) of x*y for x, y in {1, i, j, k} (indices 0..3).
  struct Signed {
    bool negative;
    int unit;
  };
  static const Signed product[4][4] = {
      {{false, 0}, {false, 1}, {false, 2}, {false, 3}},
      {{false, 1}, {true, 0}, {false, 3}, {true, 2}},
      {{false, 2}, {true, 3}, {true, 0}, {false, 1}},
      {{false, 3}, {false, 2}, {true, 1}, {true, 0}},
  };
  Parts p;
  p.states = {"1", "i", "j", "k", "-1", "-i", "-j", "-k"};
  p.letters = {"1", "i", "j", "k"};
  // State index = 4 * (negative) + unit.
  p.delta = table(8, 4, [](StateId q, LetterId a) {
    Signed r = product[q % 4][a];
    bool negative = (q >= 4) != r.negative;
    return static_cast<StateId>(4 * negative + r.unit);
  });
  return p;
}

std::string permutation_name(const std::vector<int>& p) {
  std::string s;
  for (int x : p) s += static_cast<char>('0' + x);
  return s;
}

bool is_even(const std::vector<int>& p) {
  int inversions = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j) inversions += p[i] > p[j];
  return inversions % 2 == 0;
}

// The regular action of a permutation group: states are the group's elements, written as
// strings p[0]p[1]...p[n-1] in lexicographic order; a letter rearranges the positions of the
// string (move(p)[i] = p[source[i]]).
Parts permutation_group(int n, bool even_only, const std::vector<std::string>& letters,
                        const std::vector<std::vector<int>>& sources) {
  Parts p;
  std::vector<std::vector<int>> perms;
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  do {
    if (!even_only || is_even(perm)) perms.push_back(perm);
  } while (std::next_permutation(perm.begin(), perm.end()));
  std::unordered_map<std::string, StateId> index;
  for (const auto& x : perms) {
    index.emplace(permutation_name(x), static_cast<StateId>(p.states.size()));
    p.states.push_back(permutation_name(x));
  }
  p.letters = letters;
  p.delta = table(perms.size(), letters.size(), [&](StateId q, LetterId a) {
    std::vector<int> moved(n);
    for (int i = 0; i < n; ++i) moved[i] = perms[q][sources[a][i]];
    return index.at(permutation_name(moved));
  });
  return p;
}

std::vector<int> identity_positions(int n) {
  std::vector<int> id(n);
  std::iota(id.begin(), id.end(), 0);
  return id;
}

// S_n: "id", "shift" (rotate left by one), "swap" (exchange the first two).
Parts symmetric(int n) {
  std::vector<int> id = identity_positions(n), shift(n), swap = id;
  for (int i = 0; i < n; ++i) shift[i] = (i + 1) % n;
  std::swap(swap[0], swap[1]);
  return permutation_group(n, false, {"id", "shift", "swap"}, {id, shift, swap});
}

// A_n: "id" and the 3-cycles ck of positions (0 1 k), k = 2..n-1, which generate A_n.
Parts alternating(int n) {
  std::vector<std::string> letters{"id"};
  std::vector<std::vector<int>> sources{identity_positions(n)};
  for (int k = 2; k < n; ++k) {
    std::vector<int> c = identity_positions(n);
    c[0] = 1;
    c[1] = k;
    c[k] = 0;
    std::string name = "c";  // (appending, not "c" + ..., avoids a GCC 12 -Wrestrict false alarm)
    letters.push_back(name += std::to_string(k));
    sources.push_back(c);
  }
  return permutation_group(n, true, letters, sources);
}

// A memory of n values: "read" keeps it, "wv" writes v.
Parts flipflop(int n) {
  Parts p;
  p.states = numbered(n);
  p.letters = {"read"};
  for (const auto& w : numbered(n, "w")) p.letters.push_back(w);
  p.delta = table(n, n + 1, [](StateId q, LetterId a) { return a == 0 ? q : a - 1; });
  return p;
}

// A walk on cells 0..n-1: "L" and "R" move one cell, clamped at the ends.
Parts gridworld(int n) {
  Parts p;
  p.states = numbered(n);
  p.letters = {"L", "R"};
  const StateId last = static_cast<StateId>(n - 1);
  p.delta = table(n, 2, [last](StateId q, LetterId a) {
    return a == 0 ? (q == 0 ? 0 : q - 1) : std::min(q + 1, last);
  });
  return p;
}

// Positions in (abab)*: 3 -a-> 0 -b-> 1 -a-> 2 -b-> 3; a wrong letter falls into the sink 4.
Parts abab() {
  Parts p;
  p.states = numbered(5);
  p.letters = {"a", "b"};
  p.delta = {{4, 2, 4, 0, 4}, {1, 4, 3, 4, 4}};
  p.initial = 3;
  return p;
}

// T_n, all n^n maps of n states, generated by "c" (the cycle q -> q+1 mod n), "t" (swap
// 0 and 1) and "e" (send 1 to 0, fix the rest).
Parts full_transformations(int n) {
  Parts p;
  p.states = numbered(n);
  p.letters = {"c", "t", "e"};
  const StateId m = static_cast<StateId>(n);
  p.delta = table(n, 3, [m](StateId q, LetterId a) -> StateId {
    switch (a) {
      case 0:
        return (q + 1) % m;
      case 1:
        return q < 2 ? 1 - q : q;
      default:
        return q == 1 ? 0 : q;
    }
  });
  return p;
}

struct FamilyEntry {
  ZooFamily family;
  Parts (*fixed)() = nullptr;     // families without a parameter
  Parts (*sized)(int) = nullptr;  // families with one
};

const std::vector<FamilyEntry>& registry() {
  static const std::vector<FamilyEntry> entries = [] {
    auto fixed = [](std::string name, std::string description, Parts (*make)()) {
      FamilyEntry e;
      e.family = {std::move(name), std::move(description), "", false, 0, 0, 0};
      e.fixed = make;
      return e;
    };
    auto sized = [](std::string name, std::string description, std::string parameter, int default_n,
                    int min_n, int max_n, Parts (*make)(int)) {
      FamilyEntry e;
      e.family = {std::move(name),
                  std::move(description),
                  std::move(parameter),
                  true,
                  default_n,
                  min_n,
                  max_n};
      e.sized = make;
      return e;
    };
    return std::vector<FamilyEntry>{
        fixed("parity", "parity of the number of 1s (Z_2)", parity),
        sized("cyclic", "Z_n: letter 1 adds one mod n, letter 0 does nothing", "modulus", 5, 2,
              4096, cyclic),
        sized("dihedral",
              "D_2n: a car on a ring of n stations; drive moves it one station, toggle turns it "
              "around",
              "stations on the ring", 4, 2, 2048, dihedral),
        fixed("quaternion", "Q8: right multiplication by 1, i, j, k", quaternion),
        sized("symmetric",
              "S_n acting on itself (n! states): id, shift (rotate left), swap (first two)",
              "points permuted", 5, 2, 6, symmetric),
        sized("alternating",
              "A_n acting on itself (n!/2 states): id and the 3-cycles c2..c{n-1} of positions (0 "
              "1 k)",
              "points permuted", 5, 3, 6, alternating),
        sized("flipflop", "a memory of n values: read keeps it, wv writes v", "values", 2, 2, 1024,
              flipflop),
        sized("gridworld", "a walk on n cells: L and R move one cell, clamped at the ends", "cells",
              9, 2, 4096, gridworld),
        fixed("abab", "the 5-state example: position in (abab)*, a wrong letter falls into a sink",
              abab),
        sized("full_transformations",
              "T_n, all n^n maps of n states: c cycles, t swaps 0 and 1, e sends 1 to 0", "states",
              4, 2, 10, full_transformations),
    };
  }();
  return entries;
}

std::string family_list() {
  std::string list;
  for (const auto& e : registry()) list += (list.empty() ? "" : ", ") + e.family.name;
  return list;
}

const FamilyEntry& find_family(const std::string& name) {
  for (const auto& e : registry())
    if (e.family.name == name) return e;
  throw InputError("zoo", name, "unknown automaton family (the zoo has " + family_list() + ")");
}

// The family's n: the given one checked against the range, else the default.
std::optional<int> checked_parameter(const FamilyEntry& entry, std::optional<int> n) {
  const ZooFamily& f = entry.family;
  if (!f.has_parameter) {
    if (n)
      throw InputError("zoo", f.name,
                       f.name + " takes no parameter (got n = " + std::to_string(*n) + ")");
    return std::nullopt;
  }
  int value = n.value_or(f.default_n);
  if (value < f.min_n || value > f.max_n)
    throw InputError("zoo", f.name,
                     "n = " + std::to_string(value) + " is out of range: " + f.name +
                         " takes n from " + std::to_string(f.min_n) + " to " +
                         std::to_string(f.max_n) + " (" + f.parameter + ")");
  return value;
}

}  // namespace

std::vector<ZooFamily> zoo_families() {
  std::vector<ZooFamily> families;
  for (const auto& e : registry()) families.push_back(e.family);
  return families;
}

std::string zoo_automaton_name(const std::string& family, std::optional<int> n) {
  const FamilyEntry& entry = find_family(family);
  auto value = checked_parameter(entry, n);
  return value ? family + "_" + std::to_string(*value) : family;
}

Automaton zoo_automaton(const std::string& family, std::optional<int> n) {
  const FamilyEntry& entry = find_family(family);
  auto value = checked_parameter(entry, n);
  Parts p = value ? entry.sized(*value) : entry.fixed();
  return Automaton(zoo_automaton_name(family, n), std::move(p.states), std::move(p.letters),
                   std::move(p.delta), p.initial);
}

}  // namespace krc
