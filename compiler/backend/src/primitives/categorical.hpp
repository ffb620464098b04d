#pragma once
// A categorical value carried by the residual stream, and MLP lookups over such values.
// The indicator of value v is a linear function of the stream (a list of (dimension, weight)
// terms) that is exactly 0 or 1 wherever the value is defined. A plain one-hot block is the
// simplest case; a linear image of one (e.g. "state = initial state acted on by the prefix
// element") is another, and needs no extra layer to compute.
#include <string>
#include <utility>
#include <vector>

#include "ir/program.hpp"

namespace krc {

using Terms = std::vector<std::pair<int, float>>;

struct Categorical {
  std::vector<std::string> labels;  // one per value
  std::vector<Terms> indicator;     // one per value
  int size() const { return static_cast<int>(indicator.size()); }

  static Categorical one_hot(const Subspace& s, std::vector<std::string> labels);
};

// Adds a hidden unit that is 1 exactly when every inputs[i] takes values[i] (0 when any one
// differs, with a margin of 0.5 against noise in the inputs) and writes `outputs` scaled by
// its activation: ReLU(2 * sum_i indicator_i(values[i]) - 2m + 1).
int add_lookup_unit(MlpOp& mlp, const std::vector<const Categorical*>& inputs,
                    const std::vector<int>& values, const Terms& outputs);

// A categorical value known only through a lookup: value v holds exactly when every condition
// of one of alternatives[v] holds (inputs whose one-hots are exact, so that at most one
// alternative of all values holds at a time). Lookups over it take one unit per alternative,
// which fuses "compute the value" and "look it up" into one MLP. A Categorical is the case of
// one single-condition alternative per value.
struct Condition {
  const Categorical* input;
  int value;
};
using Alternative = std::vector<Condition>;
struct Composite {
  std::vector<std::vector<Alternative>> alternatives;  // per value
  std::vector<std::string> labels;
  int size() const { return static_cast<int>(alternatives.size()); }
  static Composite of(const Categorical& c);  // c must outlive the composite
};

// One lookup unit (add_lookup_unit) per combination of alternatives of inputs[i] for
// values[i]: together they write `outputs` exactly when every input takes its value.
void add_composite_lookup(MlpOp& mlp, const std::vector<const Composite*>& inputs,
                          const std::vector<int>& values, const Terms& outputs);
// The number of units add_composite_lookup adds.
long long composite_lookup_units(const std::vector<const Composite*>& inputs,
                                 const std::vector<int>& values);

// Terms that write one-hot value v of a block: {(s[v], weight)}.
inline Terms write_value(const Subspace& s, int v, float weight = 1.0f) { return {{s[v], weight}}; }

// Adds units ReLU(x_d) -> -x_d for each dimension of `s`: clears a block of non-negative
// values (scratch that an attention head wrote) so that it can be written again.
void add_clear_units(MlpOp& mlp, const Subspace& s);

}  // namespace krc
