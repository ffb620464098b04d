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

void add_clear_units(MlpOp& mlp, const Subspace& s) {
  for (int i = 0; i < s.width; ++i) mlp.add_unit({{s[i], 1.0f}}, 0.0f, {{s[i], -1.0f}});
}

}  // namespace krc
