#pragma once
// One strategy shape: plan() decides everything a strategy's network needs, build() writes
// its operations, report() tells the compile result what was planned. A plan is one of five
// alternatives (scan, the kr cascade, the kr strategy's clamped walk, onelayer, and the network
// of no layers for an automaton without letters), each carrying what its builder reads. The
// cascade's and the walk's plans hold their operations already: their depth is the scheduler's
// placement of them (kr_strategy.hpp), so building them again would only repeat the work.
#include <memory>
#include <optional>
#include <variant>

#include "ir/program.hpp"
#include "krc/backend/compile.hpp"
#include "primitives/prefix_scan.hpp"
#include "strategies/kr/kr_strategy.hpp"

namespace krc {

struct ScanStrategyPlan {
  const Automaton* automaton = nullptr;
  int max_len = 0;
  ScanChoice choice;
  float select_sharpness = 20.0f;  // lambda of the position fetches (attention_heads.hpp)
};

struct KrStrategyPlan {
  std::shared_ptr<const HolonomyDecomposition> decomposition;  // what cascade points into
  KrCascade cascade;
  std::shared_ptr<const Program> program;  // the operations cascade.plan was placed from
};

struct WalkStrategyPlan {
  WalkPlan walk;
  std::shared_ptr<const Program> program;  // the operations walk.layers was scheduled from
};

struct OneLayerStrategyPlan {
  const Automaton* automaton = nullptr;
  OneLayerPlan plan;
};

// No letters: one network whatever the strategy (empty_alphabet.hpp). The strategy asked for is
// what the file records; auto's is scan, a parallel prefix of no steps.
struct EmptyAlphabetPlan {
  const Automaton* automaton = nullptr;
  int max_len = 0;
  Strategy strategy = Strategy::Scan;
};

using Plan = std::variant<ScanStrategyPlan, KrStrategyPlan, WalkStrategyPlan, OneLayerStrategyPlan,
                          EmptyAlphabetPlan>;

// The plan of `strategy` (scan, kr or onelayer; auto too where the automaton has no letters, as
// there is nothing to compare); options.strategy == Auto applies auto's limits (kr: a
// decomposition bounded in images). Throws LimitError where it does not fit, options.precision
// included (precision_plan.hpp's check_precision).
Plan plan(const Automaton& automaton, const CompileOptions& options, Strategy strategy);
inline Plan plan(const Automaton& automaton, const CompileOptions& options) {
  return plan(automaton, options, options.strategy);
}

// The plan's operations (the planned ones where the plan holds them).
std::shared_ptr<const Program> build(const Plan& plan);

// The cascade's depth, known before its weights are written; nothing for the other plans.
std::optional<int> cascade_layers(const Plan& plan);

// The strategy, its typed plan, the reason ("... (requested)") and the plan's entry in the
// network's compiler metadata ("scan", "cascade" or "onelayer").
void report(const Plan& plan, CompileResult& result);

}  // namespace krc
