#pragma once
// What the two builders of a clamped walk share while they write one program (see
// clamped_walk.cpp for the construction and why it is exact).
//
// Legend: n cells, S the running sum of the letters' steps, r a class mod n.
#include <string>
#include <vector>

#include "ir/program.hpp"
#include "krc/backend/plan.hpp"
#include "primitives/categorical.hpp"
#include "primitives/features.hpp"
#include "primitives/integer_comb.hpp"

namespace krc {

struct WalkContext {
  WalkContext(Program& program, const WalkPlan& walk);

  Program& program;
  Features features;
  const WalkPlan& walk;
  int one = -1;      // the constant dimension
  Terms sum;         // S_t: the dyadic heads' dimensions, each weight 1
  Subspace residue;  // one-hot of S_t mod n
  Subspace cell;     // one-hot of the walk's cell, unembedded into its state

  // Layer 1: S_t and its residue. Then the cells' subspace and its unembedding.
  void add_sum_and_residue();
  void allocate_cells(const std::vector<std::string>& state_names);
  // S_t as the input of an integer comb over its whole range.
  IntegerInput sum_input() const { return IntegerInput{sum, walk.sum_min, walk.sum_max, one}; }
  // The level of class r in the virtual history before BOS: the one in [-s0, M - s0].
  int virtual_level(int r) const;
};

// Layer 2 of each form: the latest visit (unit steps) or departure from each class, and the
// decoding MLP that writes `cell`.
void build_unit_step_walk(WalkContext& ctx);
void build_departure_walk(WalkContext& ctx);

}  // namespace krc
