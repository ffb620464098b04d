#pragma once
// Strategy `kr`: the holonomy (Krohn-Rhodes) cascade as a transformer whose depth does not
// grow with the input length (Liu et al., Theorem 2), built from its plan (krc/backend/plan.hpp):
// level by level (the builders in this folder, one per mode), each level reading the levels
// above at t-1, and finally a lookup that decodes the coordinates into the automaton's state.
//
// Planning has two halves. decide_cascade reads the action tables (each level's analysis,
// once) and decides each level's mode, the fusions and the counter block. Where the
// operations land is not predicted by a rule of its own: build_and_place builds the cascade's
// operations and takes each level's sublayers and the depth from the scheduler's placement of
// them (ir/schedule.hpp), so that a builder's new operation moves the plan with it.
#include <functional>
#include <optional>
#include <vector>

#include "ir/program.hpp"
#include "krc/backend/plan.hpp"
#include "krc/decompose/holonomy.hpp"
#include "strategies/kr/cascade_context.hpp"
#include "strategies/kr/level_analysis.hpp"

namespace krc {

// Everything the cascade builder reads.
struct KrCascade {
  const HolonomyDecomposition* decomposition = nullptr;
  std::vector<LevelAnalysis> analyses;  // per level, read once from the action tables
  KrPlan plan;
  // Per level: the parallel prefix a scan level runs, as planned (empty for the other modes).
  std::vector<std::optional<ScanLevel>> scans;
  float select_sharpness = 20.0f;  // lambda of the fetches from t - k (options.select_sharpness)
  // Called after level d's operations are added (before the fetch of its coordinate at t-1):
  // the builders' extension point, through which tests add operations of their own.
  std::function<void(CascadeContext&, int d)> after_level;
};

// The decisions, without placement (the levels' sublayers -1, layers 0).
KrCascade decide_cascade(const HolonomyDecomposition& decomposition, int max_len,
                         const KrOptions& options);

// The cascade's operations.
Program build_kr(const KrCascade& cascade);

// Builds the cascade's operations and sets cascade.plan's depth and each level's sublayers to
// where the scheduler places them (an operation belongs to the level its role names).
Program build_and_place(KrCascade& cascade);

}  // namespace krc
