#pragma once
// Internals of the value sets (gpt2_value_sets.hpp) shared by gpt2_value_sets.cpp (groups, the
// attention) and gpt2_value_sets_mlp.cpp (the MLPs).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "export/gpt2_value_sets.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::value_sets {

constexpr double kMaxCombinations = 1 << 21;  // per sublayer component: the work bound
constexpr std::size_t kMaxValues = 1 << 16;   // per group
constexpr std::size_t kMaxPositional = 64;    // values of a coordinate that varies by position
constexpr int kZero = -1000;                  // the grid of 0: it sits on every grid

using Vector = std::vector<float>;
using Set = std::vector<Vector>;
using Weights = std::vector<std::vector<std::pair<int, float>>>;
// g with x an odd multiple of 2^-g; x is a double holding a float or a product of two floats.
inline int grid_of(double x) {
  if (x == 0) return kZero;
  int e = 0;
  const double m = std::frexp(std::fabs(x), &e);
  const auto bits = static_cast<std::uint64_t>(std::ldexp(m, 53));
  return -(e - 53 + std::countr_zero(bits));
}

// A float32 sum of terms, each a float or an exact product of two (so exact in double), is
// exact in any order and with any FMA contraction when every term is a multiple of 2^-grid,
// with grid <= 149 (float32's finest spacing), and their magnitudes add up to at most
// 2^24 * 2^-grid (and far below float32's overflow): every partial sum is then an integer
// multiple of 2^-grid of at most 2^24 of them, which is a float, so no step rounds. The double
// sum is exact for the same reason.
struct ExactSum {
  double sum = 0, mass = 0;
  int grid = kZero;
  void add(double term) {
    if (term == 0) return;  // 0 * x and + 0 change no non-zero sum, and a zero sum is 0
    sum += term;
    mass += std::fabs(term);
    grid = std::max(grid, grid_of(term));
  }
  bool exact() const { return grid <= 149 && std::ldexp(mass, grid) <= 0x1p24 && mass < 0x1p100; }
};

// Row-major m's entries as lists per row: (column, value).
Weights rows_of(const SparseMatrix& m);
// Per column: (row, value).
Weights columns_of(const SparseMatrix& m);

// What a sublayer touches in one connected piece: the groups it reads or writes, its units
// (hidden units or heads) and the coordinates it writes; `interval` when one of them has no set.
struct Component {
  std::vector<int> groups;
  std::vector<int> units;
  std::vector<int> written;
  bool interval = false;
};

// The groups' coordinates, in the order enumerate's records list them.
std::vector<int> joint_coords(const ValueSets& s, const std::vector<int>& groups);

// Replaces the groups by one over their coordinates holding `values`.
void merge(ValueSets& s, const std::vector<int>& groups, Set values);

// The coordinates marked `leave` are followed by intervals alone from now on; their groups keep
// the other coordinates' values (a projection).
void release(ValueSets& s, const std::vector<bool>& leave);

// Groups the units by the coordinates they touch (`touches[u]`); a coordinate with no set joins
// the component that touches it to the interval node. Only components that write are returned.
std::vector<Component> components(const ValueSets& s, const std::vector<std::vector<int>>& touches,
                                  const std::vector<int>& written);

void gather(const Vector& x, const std::vector<int>& cs, Vector& out);

// The joint values of the coordinates `cs` (in that order), from their groups' sets, taken
// independent across groups; nullopt when one has no set or past 4,096 vectors.
std::optional<Set> joint_values(const ValueSets& s, const std::vector<int>& cs);

// Every combination of the groups' values and of the `extra` factors (heads' values at another
// position) is passed to step(x, chosen, record), which reads the residual x (dense, the
// groups' coordinates filled in), may update it, and fills `record` with what to keep; false
// when a sum is not provably exact. The distinct records, or nullopt past the caps.
template <typename Step>
std::optional<Set> enumerate(const ValueSets& s, const std::vector<int>& groups,
                             const std::vector<const Set*>& extra, Vector x, Step step) {
  std::vector<std::size_t> sizes;
  double total = 1;
  for (int g : groups) sizes.push_back(s.values[static_cast<std::size_t>(g)].size());
  for (const Set* e : extra) sizes.push_back(e->size());
  for (std::size_t z : sizes) total *= static_cast<double>(z);
  if (total > kMaxCombinations) return std::nullopt;
  std::set<Vector> out;
  std::vector<std::size_t> at(sizes.size(), 0);
  Vector record;
  std::vector<const Vector*> chosen(extra.size());
  for (bool more = total > 0; more;) {
    interruption_point();  // one step of a layer since the last
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const auto g = static_cast<std::size_t>(groups[i]);
      for (std::size_t j = 0; j < s.coords[g].size(); ++j)
        x[static_cast<std::size_t>(s.coords[g][j])] = s.values[g][at[i]][j];
    }
    for (std::size_t i = 0; i < extra.size(); ++i) chosen[i] = &(*extra[i])[at[groups.size() + i]];
    record.clear();
    if (!step(x, chosen, record)) return std::nullopt;
    out.insert(record);
    if (out.size() > kMaxValues) return std::nullopt;
    std::size_t i = 0;
    for (; i < at.size() && ++at[i] == sizes[i]; ++i) at[i] = 0;
    more = i < at.size();
  }
  return Set(out.begin(), out.end());
}

// The components of layer `index`'s MLP over the sets `s`, as mlp_value_sets forms them.
std::vector<Component> mlp_components(const Network& n, std::size_t index, const ValueSets& s);

// The selector rule (gpt2_value_sets_mlp.cpp) on component `k` of layer `index`'s MLP, whether
// or not the whole enumeration would fit: per coordinate of k.written, a superset of its values
// after the MLP; nullopt where the rule gives none (k reads a coordinate with no set, a cap, a
// sum not provably exact).
std::optional<std::vector<Set>> selector_rule(const Network& n, std::size_t index,
                                              const ValueSets& s, const Component& k);

// mlp_value_sets with the choice the prover makes (EnumerateFirst: the whole component where it
// fits, the selector rule where not) or the selector rule on every component (SelectorOnly), so
// that tests can follow a network as the rule alone leaves it.
enum class MlpRule { EnumerateFirst, SelectorOnly };
void mlp_value_sets(const Network& n, std::size_t index, ValueSets& s, MlpRule rule);

// Evaluates each component and merges its groups, or marks what it writes to leave; then
// releases those.
template <typename Evaluate>
void apply(ValueSets& s, const std::vector<Component>& ks, std::vector<bool>& leave, Evaluate f) {
  for (const Component& k : ks) {
    std::optional<Set> values;
    if (!k.interval) values = f(k);
    if (values) {
      merge(s, k.groups, std::move(*values));
    } else {
      for (int c : k.written) leave[static_cast<std::size_t>(c)] = true;
    }
  }
  release(s, leave);
}

}  // namespace krc::value_sets
