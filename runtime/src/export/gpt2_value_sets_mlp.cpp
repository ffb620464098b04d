// The MLPs' part of the value sets (gpt2_value_sets.hpp): each component of a sublayer is
// evaluated on every combination of its groups' values.
#include <cmath>
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

}  // namespace

void mlp_value_sets(const Network& n, std::size_t index, ValueSets& s) {
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
  std::vector<bool> leave(d, false);
  std::vector<double> hidden(t.inputs.size());
  apply(s, components(s, touches, written), leave, [&](const Component& k) {
    const std::vector<int> cs = joint_coords(s, k.groups);
    const bool checked = integral(s, k, t, d);  // then no sum needs checking one by one
    return enumerate(s, k.groups, {}, Vector(d, 0.0f),
                     [&](Vector& x, const std::vector<const Vector*>&, Vector& record) {
                       const bool exact = checked ? mlp_step<PlainSum>(t, k, hidden, x)
                                                  : mlp_step<ExactSum>(t, k, hidden, x);
                       return exact && (gather(x, cs, record), true);
                     });
  });
}

}  // namespace krc
