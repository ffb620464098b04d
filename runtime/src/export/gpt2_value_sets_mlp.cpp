// The MLPs' part of the value sets (gpt2_value_sets.hpp): each component of a sublayer is
// evaluated on every combination of its groups' values.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "export/gpt2_value_sets.hpp"
#include "export/gpt2_value_sets_detail.hpp"

namespace krc {

namespace {

using namespace value_sets;

struct MlpTables {
  Weights inputs;  // per hidden unit: (coordinate, weight)
  Weights feeds;   // per coordinate: (hidden unit, weight)
  const Eigen::VectorXf& in_bias;
  const Eigen::VectorXf& out_bias;
  explicit MlpTables(const Mlp& m)
      : inputs(rows_of(m.in_weight)),
        feeds(rows_of(m.out_weight)),
        in_bias(m.in_bias),
        out_bias(m.out_bias) {}
};

// A sum known exact beforehand (integral below).
struct PlainSum {
  double sum = 0;
  void add(double term) { sum += term; }
  static bool exact() { return true; }
};

bool integer(double v) { return v == std::floor(v); }

// Whether every sum the component's MLP computes is one of integers whose magnitudes add up to
// at most 2^24 (ExactSum's condition with grid 0, met on every combination at once): from
// integer weights and biases and the largest magnitude each coordinate's values take.
bool integral(const ValueSets& s, const Component& k, const MlpTables& t, std::size_t d) {
  std::vector<double> most(d, 0), hidden(t.inputs.size(), 0);
  for (int g : k.groups)
    for (const Vector& v : s.values[static_cast<std::size_t>(g)])
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!integer(v[i])) return false;
        double& m = most[static_cast<std::size_t>(s.coords[static_cast<std::size_t>(g)][i])];
        m = std::max(m, static_cast<double>(std::fabs(v[i])));
      }
  for (int u : k.units) {
    double& mass = hidden[static_cast<std::size_t>(u)];
    mass = std::fabs(t.in_bias[u]);
    if (!integer(t.in_bias[u])) return false;
    for (const auto& [c, w] : t.inputs[static_cast<std::size_t>(u)]) {
      if (!integer(w)) return false;
      mass += std::fabs(w) * most[static_cast<std::size_t>(c)];
    }
    if (mass > 0x1p24) return false;
  }
  for (int c : k.written) {
    double mass = most[static_cast<std::size_t>(c)] + std::fabs(t.out_bias[c]);
    if (!integer(t.out_bias[c])) return false;
    for (const auto& [u, w] : t.feeds[static_cast<std::size_t>(c)]) {
      if (!integer(w)) return false;
      mass += std::fabs(w) * hidden[static_cast<std::size_t>(u)];
    }
    if (mass > 0x1p24) return false;
  }
  return true;
}

// One combination through the component's part of the MLP: x + out(ReLU(in x + b)) + b' on the
// coordinates it writes; false when a sum is not provably exact.
template <typename Sum>
bool mlp_step(const MlpTables& t, const Component& k, std::vector<double>& hidden, Vector& x) {
  for (int u : k.units) {
    Sum sum;
    sum.add(t.in_bias[u]);
    for (const auto& [c, w] : t.inputs[static_cast<std::size_t>(u)])
      sum.add(static_cast<double>(w) * x[static_cast<std::size_t>(c)]);
    if (!sum.exact()) return false;
    hidden[static_cast<std::size_t>(u)] = std::max(sum.sum, 0.0);  // ReLU: exact
  }
  for (int c : k.written) {
    Sum sum;
    sum.add(x[static_cast<std::size_t>(c)]);
    sum.add(t.out_bias[c]);
    for (const auto& [u, w] : t.feeds[static_cast<std::size_t>(c)])
      sum.add(static_cast<double>(w) * hidden[static_cast<std::size_t>(u)]);
    if (!sum.exact()) return false;
    x[static_cast<std::size_t>(c)] = static_cast<float>(sum.sum);
  }
  return true;
}

// The selector rule (compiler/certify.md, "Next: the selector rule"), for a component too large
// to enumerate whole (a binary-coordinate compose step joins every state's bits): each written
// coordinate c is evaluated on its own. S, the inputs more than half of c's units read, is fixed
// to each of its joint values; a unit whose pre-activation is then at most 0 over the other
// inputs' ranges is off (contributes exactly 0); the rest are enumerated on the joint values of
// what they read (and c's old value). Every sum is checked exact as in mlp_step. The result is a
// superset of c's values: the joint values taken group by group and independent, as everywhere.
constexpr double kMaxSelectorWork = 1 << 26;  // unit evaluations per component

std::optional<std::vector<Set>> selector_values(const ValueSets& s, const MlpTables& t,
                                                const Component& k, std::size_t d) {
  std::vector<double> lo(d, 0), hi(d, 0);
  std::vector<int> grid(d, kZero);  // the finest grid among a coordinate's values
  for (int g : k.groups)
    for (std::size_t i = 0; i < s.coords[static_cast<std::size_t>(g)].size(); ++i) {
      const auto c = static_cast<std::size_t>(s.coords[static_cast<std::size_t>(g)][i]);
      bool first = true;
      for (const Vector& v : s.values[static_cast<std::size_t>(g)]) {
        lo[c] = first ? v[i] : std::min<double>(lo[c], v[i]);
        hi[c] = first ? v[i] : std::max<double>(hi[c], v[i]);
        grid[c] = std::max(grid[c], grid_of(v[i]));
        first = false;
      }
    }
  double work = 0;
  std::vector<Set> out;
  Vector x(d, 0.0f);
  std::vector<double> hidden(t.inputs.size(), 0);
  for (int c : k.written) {
    const auto& feeds = t.feeds[static_cast<std::size_t>(c)];
    std::map<int, int> count;
    for (const auto& [u, w] : feeds)
      for (const auto& [r, v] : t.inputs[static_cast<std::size_t>(u)]) ++count[r];
    std::vector<int> selector;
    for (const auto& [r, n] : count)
      if (n >= 2 && 2 * n > static_cast<int>(feeds.size())) selector.push_back(r);
    const std::optional<Set> fixed = joint_values(s, selector);
    if (!fixed) return std::nullopt;
    std::set<float> values;
    for (const Vector& v : *fixed) {
      for (std::size_t i = 0; i < selector.size(); ++i)
        x[static_cast<std::size_t>(selector[i])] = v[i];
      std::set<int> open_reads{c};
      std::vector<int> open;
      for (const auto& [u, w] : feeds) {
        double top = t.in_bias[u];
        for (const auto& [r, wr] : t.inputs[static_cast<std::size_t>(u)]) {
          const bool is_fixed = std::binary_search(selector.begin(), selector.end(), r);
          const auto rc = static_cast<std::size_t>(r);
          top += is_fixed ? wr * double(x[rc]) : std::max(wr * lo[rc], wr * hi[rc]);
        }
        if (top <= 0) continue;  // off: its float32 sum is exact (checked below) and <= 0
        open.push_back(u);
        for (const auto& [r, wr] : t.inputs[static_cast<std::size_t>(u)])
          if (!std::binary_search(selector.begin(), selector.end(), r)) open_reads.insert(r);
      }
      const std::vector<int> rest(open_reads.begin(), open_reads.end());
      const std::optional<Set> free = joint_values(s, rest);
      if (!free) return std::nullopt;
      work += static_cast<double>(free->size()) * static_cast<double>(feeds.size());
      if (work > kMaxSelectorWork) return std::nullopt;
      for (const Vector& f : *free) {
        for (std::size_t i = 0; i < rest.size(); ++i) x[static_cast<std::size_t>(rest[i])] = f[i];
        ExactSum sum;
        sum.add(x[static_cast<std::size_t>(c)]);
        sum.add(t.out_bias[c]);
        for (const auto& [u, w] : feeds) {
          if (std::find(open.begin(), open.end(), u) == open.end()) continue;
          ExactSum pre;
          pre.add(t.in_bias[u]);
          for (const auto& [r, wr] : t.inputs[static_cast<std::size_t>(u)])
            pre.add(static_cast<double>(wr) * x[static_cast<std::size_t>(r)]);
          if (!pre.exact()) return std::nullopt;
          sum.add(static_cast<double>(w) * std::max(pre.sum, 0.0));
        }
        if (!sum.exact()) return std::nullopt;
        values.insert(static_cast<float>(sum.sum));
      }
    }
    // The off units' sums must be exact too, so that their float32 value is the exact one (at
    // most 0): every term on a grid and the magnitudes within 2^24 of it, over the ranges.
    for (const auto& [u, w] : feeds) {
      int g = grid_of(t.in_bias[u]);
      double mass = std::fabs(t.in_bias[u]);
      for (const auto& [r, wr] : t.inputs[static_cast<std::size_t>(u)]) {
        const auto rc = static_cast<std::size_t>(r);
        if (grid[rc] == kZero || wr == 0) continue;
        g = std::max(g, grid_of(wr) + grid[rc]);
        mass += std::fabs(wr) * std::max(std::fabs(lo[rc]), std::fabs(hi[rc]));
      }
      if (g > 149 || std::ldexp(mass, std::max(g, 0)) > 0x1p24) return std::nullopt;
    }
    Set set;
    for (float v : values) set.push_back({v});
    out.push_back(std::move(set));
  }
  return out;
}

}  // namespace

namespace value_sets {

std::vector<Component> mlp_components(const Network& n, std::size_t index, const ValueSets& s) {
  const MlpTables t(*n.layers[index].mlp);
  const auto d = static_cast<std::size_t>(n.d_model());
  std::vector<std::vector<int>> touches(t.inputs.size());
  for (std::size_t u = 0; u < t.inputs.size(); ++u)
    for (const auto& [c, w] : t.inputs[u]) touches[u].push_back(c);
  std::vector<int> written;
  for (std::size_t c = 0; c < d; ++c) {
    for (const auto& [u, w] : t.feeds[c])
      touches[static_cast<std::size_t>(u)].push_back(static_cast<int>(c));
    if (!t.feeds[c].empty() || t.out_bias[static_cast<Eigen::Index>(c)] != 0)
      written.push_back(static_cast<int>(c));
  }
  return components(s, touches, written);
}

std::optional<std::vector<Set>> selector_rule(const Network& n, std::size_t index,
                                              const ValueSets& s, const Component& k) {
  if (k.interval) return std::nullopt;
  return selector_values(s, MlpTables(*n.layers[index].mlp), k,
                         static_cast<std::size_t>(n.d_model()));
}

void mlp_value_sets(const Network& n, std::size_t index, ValueSets& s, MlpRule rule) {
  const MlpTables t(*n.layers[index].mlp);
  const auto d = static_cast<std::size_t>(n.d_model());
  std::vector<bool> leave(d, false);
  std::vector<double> hidden(t.inputs.size());
  std::vector<std::pair<int, Set>> singles;  // written coordinates the selector rule followed
  for (const Component& k : mlp_components(n, index, s)) {
    std::optional<Set> values;
    if (!k.interval && rule == MlpRule::EnumerateFirst) {
      const std::vector<int> cs = joint_coords(s, k.groups);
      const bool checked = integral(s, k, t, d);  // then no sum needs checking one by one
      values = enumerate(s, k.groups, {}, Vector(d, 0.0f),
                         [&](Vector& x, const std::vector<const Vector*>&, Vector& record) {
                           const bool exact = checked ? mlp_step<PlainSum>(t, k, hidden, x)
                                                      : mlp_step<ExactSum>(t, k, hidden, x);
                           return exact && (gather(x, cs, record), true);
                         });
    }
    if (values) {
      merge(s, k.groups, std::move(*values));
      continue;
    }
    std::optional<std::vector<Set>> each;
    if (!k.interval) each = selector_values(s, t, k, d);
    for (std::size_t i = 0; i < k.written.size(); ++i) {
      leave[static_cast<std::size_t>(k.written[i])] = true;
      if (each) singles.emplace_back(k.written[i], std::move((*each)[i]));
    }
  }
  release(s, leave);
  for (auto& [c, values] : singles) {
    s.group[static_cast<std::size_t>(c)] = static_cast<int>(s.coords.size());
    s.coords.push_back({c});
    s.values.push_back(std::move(values));
  }
}

}  // namespace value_sets

void mlp_value_sets(const Network& n, std::size_t index, ValueSets& s) {
  value_sets::mlp_value_sets(n, index, s, value_sets::MlpRule::EnumerateFirst);
}

}  // namespace krc
