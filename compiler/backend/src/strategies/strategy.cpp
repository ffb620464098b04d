#include "strategies/strategy.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "ir/schedule.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/decompose/holonomy.hpp"
#include "precision_plan.hpp"
#include "primitives/attention_heads.hpp"
#include "strategies/empty_alphabet.hpp"
#include "strategies/kr/clamped_walk.hpp"
#include "strategies/onelayer/onelayer_strategy.hpp"
#include "strategies/scan_strategy.hpp"

namespace krc {

namespace {

// Under auto, the holonomy decomposition stops past this many images of Q: the tile search
// costs about images x classes subset tests (the 55-state TCP model: 114,377 images, 45 s,
// then 197 levels whose tables do not fit), and a cascade that deep has more layers than scan.
constexpr std::size_t kAutoMaxImages = std::size_t{1} << 14;

// lambda of the position fetches: 64 under `--norm layernorm`, so that every key but the target
// loses by at least 128 and float32's softmax leaks exactly 0 (compiler/README.md §7).
float select_sharpness(const CompileOptions& options) {
  return options.norm == Norm::LayerNorm ? kLayerNormSharpness : kSelectSharpness;
}

void progress(const CompileOptions& options, const char* line) {
  if (options.progress) options.progress(line);
}

std::shared_ptr<const HolonomyDecomposition> decompose(const Automaton& automaton,
                                                       const CompileOptions& options) {
  DecomposeOptions decompose;
  decompose.progress = options.progress;
  if (options.strategy == Strategy::Auto) decompose.max_images = kAutoMaxImages;
  progress(options, "decomposing (holonomy)");
  const MemoryPhase phase("decomposing (holonomy)");
  try {  // the cascade network is built from the complete action tables; scan needs none
    return std::make_shared<const HolonomyDecomposition>(
        HolonomyDecomposition::compute(automaton, decompose));
  } catch (const LimitError& e) {
    // The hint helps where kr was asked for; under auto, scan's own outcome is reported too.
    if (options.strategy != Strategy::Kr) throw;
    throw LimitError(std::string(e.what()) +
                     "; the kr strategy needs the complete action tables, "
                     "--strategy scan does not");
  }
}

// A clamped walk (gridworld) needs no decomposition: two layers for any number of cells.
// Otherwise the cascade, its depth and sublayers placed by scheduling its operations.
Plan plan_kr_strategy(const Automaton& automaton, const CompileOptions& options) {
  if (auto walk = options.kr.clamped_walk ? recognise_clamped_walk(automaton, options.max_len)
                                          : std::nullopt) {
    progress(options, "building the clamped-walk network");
    const MemoryPhase phase("building the clamped-walk network");
    auto program = std::make_shared<const Program>(build_clamped_walk(automaton, *walk));
    walk->layers = schedule(*program).layers;
    return WalkStrategyPlan{std::move(*walk), std::move(program)};
  }
  KrStrategyPlan kr;
  kr.decomposition = decompose(automaton, options);
  KrOptions kr_options = options.kr;
  kr_options.select_sharpness = select_sharpness(options);
  kr.cascade = decide_cascade(*kr.decomposition, options.max_len, kr_options);
  progress(options, "building the Krohn-Rhodes cascade network");
  const MemoryPhase phase("building the Krohn-Rhodes cascade network");
  kr.program = std::make_shared<const Program>(build_and_place(kr.cascade));
  return kr;
}

template <class... F>
struct Visitor : F... {
  using F::operator()...;
};

}  // namespace

Plan plan(const Automaton& automaton, const CompileOptions& options, Strategy strategy) {
  // No letters: the network of no layers, exact in every format, so no precision refuses it.
  if (automaton.letter_count() == 0)
    return EmptyAlphabetPlan{&automaton, options.max_len,
                             strategy == Strategy::Auto ? Strategy::Scan : strategy};
  if (strategy != Strategy::Auto) check_precision(strategy, options);
  switch (strategy) {
    case Strategy::Scan: {
      progress(options, "building the parallel-prefix network");
      const MemoryPhase phase("planning the parallel-prefix network");
      return ScanStrategyPlan{
          &automaton, options.max_len,
          plan_scan(automaton, options.max_len, scan_integer_form_allowed(options)),
          select_sharpness(options)};
    }
    case Strategy::Kr:
      return plan_kr_strategy(automaton, options);
    case Strategy::OneLayer: {
      progress(options, "planning the one-layer contextual mapping");
      const MemoryPhase phase("planning the one-layer network");
      return OneLayerStrategyPlan{&automaton,
                                  plan_onelayer(automaton, options.max_len, options.onelayer)};
    }
    case Strategy::Auto:
      break;
  }
  throw std::logic_error("plan: auto is not one strategy");
}

std::shared_ptr<const Program> build(const Plan& plan) {
  return std::visit(
      Visitor{
          [](const ScanStrategyPlan& p) {
            const MemoryPhase phase("building the parallel-prefix network");
            return std::make_shared<const Program>(
                build_scan(*p.automaton, p.max_len, p.choice, p.select_sharpness));
          },
          [](const KrStrategyPlan& p) { return p.program; },
          [](const WalkStrategyPlan& p) { return p.program; },
          [](const OneLayerStrategyPlan& p) {
            const MemoryPhase phase("building the one-layer network");
            return std::make_shared<const Program>(build_onelayer(*p.automaton, p.plan));
          },
          [](const EmptyAlphabetPlan& p) {
            return std::make_shared<const Program>(build_empty_alphabet(*p.automaton, p.max_len));
          },
      },
      plan);
}

std::optional<int> cascade_layers(const Plan& plan) {
  if (const auto* kr = std::get_if<KrStrategyPlan>(&plan)) return kr->cascade.plan.layers;
  return std::nullopt;
}

void report(const Plan& plan, CompileResult& result) {
  auto& metadata = result.network.compiler;
  std::visit(Visitor{
                 [&](const ScanStrategyPlan& p) {
                   result.strategy = Strategy::Scan;
                   result.scan = p.choice.plan;
                   result.reason = "parallel prefix over the letters' transformations (requested)";
                   metadata["scan"] = to_json(p.choice.plan);
                 },
                 [&](const KrStrategyPlan& p) {
                   result.strategy = Strategy::Kr;
                   result.kr = p.cascade.plan;
                   result.reason = "Krohn-Rhodes cascade (requested)";
                   metadata["cascade"] = to_json(p.cascade.plan);
                 },
                 [&](const WalkStrategyPlan& p) {
                   result.strategy = Strategy::Kr;
                   result.walk = p.walk;
                   result.reason = "Krohn-Rhodes strategy, clamped walk on a path (requested)";
                   metadata["cascade"] = to_json(p.walk);
                 },
                 [&](const OneLayerStrategyPlan& p) {
                   result.strategy = Strategy::OneLayer;
                   result.onelayer = p.plan;
                   result.reason = "one attention layer as a contextual mapping (requested)";
                   metadata["onelayer"] = to_json(p.plan);
                 },
                 [&](const EmptyAlphabetPlan& p) {
                   result.strategy = p.strategy;
                   result.reason = empty_alphabet_clause() +
                                   " (no layers: <bos>'s embedding is the initial state, read by "
                                   "the unembedding)";
                   metadata["empty_alphabet"] = result.reason;
                 },
             },
             plan);
}

}  // namespace krc
