#pragma once
// Strategy `kr`: the holonomy (Krohn-Rhodes) cascade as a transformer whose depth does not
// grow with the input length (Liu et al., Theorem 2), built from its plan (krc/plan.hpp):
// level by level (the builders in this folder, one per mode), each level reading the levels
// above at t-1, and finally a lookup that decodes the coordinates into the automaton's state.
#include "ir/program.hpp"
#include "krc/holonomy.hpp"
#include "krc/plan.hpp"

namespace krc {

Program build_kr(const HolonomyDecomposition& decomposition, const KrPlan& plan,
                 const KrOptions& options);

}  // namespace krc
