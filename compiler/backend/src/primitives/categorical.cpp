#include "primitives/categorical.hpp"

namespace krc {

Categorical Categorical::one_hot(const Subspace& s, std::vector<std::string> labels) {
  Categorical c;
  c.labels = std::move(labels);
  for (int v = 0; v < s.width; ++v) c.indicator.push_back({{s[v], 1.0f}});
  return c;
}

int add_lookup_unit(MlpOp& mlp, const std::vector<const Categorical*>& inputs,
                    const std::vector<int>& values, const Terms& outputs) {
  Terms in;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (auto [dim, w] : inputs[i]->indicator.at(values[i])) in.emplace_back(dim, 2.0f * w);
  const float m = static_cast<float>(inputs.size());
  return mlp.add_unit(in, -2.0f * m + 1.0f, outputs);
}

Composite Composite::of(const Categorical& c) {
  Composite out;
  out.labels = c.labels;
  for (int v = 0; v < c.size(); ++v) out.alternatives.push_back({{{&c, v}}});
  return out;
}

long long composite_lookup_units(const std::vector<const Composite*>& inputs,
                                 const std::vector<int>& values) {
  long long units = 1;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    units *= static_cast<long long>(inputs[i]->alternatives.at(values[i]).size());
  return units;
}

void add_composite_lookup(MlpOp& mlp, const std::vector<const Composite*>& inputs,
                          const std::vector<int>& values, const Terms& outputs) {
  // Odometer over one alternative per input.
  std::vector<std::size_t> choice(inputs.size(), 0);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]->alternatives.at(values[i]).empty()) return;  // the value never holds
  while (true) {
    std::vector<const Categorical*> categoricals;
    std::vector<int> which;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      for (const Condition& c : inputs[i]->alternatives[values[i]][choice[i]]) {
        categoricals.push_back(c.input);
        which.push_back(c.value);
      }
    add_lookup_unit(mlp, categoricals, which, outputs);
    std::size_t i = 0;
    for (; i < inputs.size(); ++i) {
      if (++choice[i] < inputs[i]->alternatives[values[i]].size()) break;
      choice[i] = 0;
    }
    if (i == inputs.size()) return;
  }
}

void add_clear_units(MlpOp& mlp, const Subspace& s) {
  for (int i = 0; i < s.width; ++i) mlp.add_unit({{s[i], 1.0f}}, 0.0f, {{s[i], -1.0f}});
}

}  // namespace krc
