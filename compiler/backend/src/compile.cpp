#include "krc/compile.hpp"

#include <optional>
#include <stdexcept>

#include "ir/assemble.hpp"
#include "ir/schedule.hpp"
#include "krc/automaton_json.hpp"
#include "krc/holonomy.hpp"
#include "krc/input_error.hpp"
#include "krc/verifier.hpp"
#include "krc/version.hpp"
#include "precision_plan.hpp"
#include "primitives/attention_heads.hpp"
#include "strategies/kr/clamped_walk.hpp"
#include "strategies/kr/kr_strategy.hpp"
#include "strategies/onelayer/onelayer_strategy.hpp"
#include "strategies/scan_strategy.hpp"

namespace krc {

Strategy strategy_from_string(const std::string& s) {
  if (s == "auto") return Strategy::Auto;
  if (s == "scan") return Strategy::Scan;
  if (s == "kr") return Strategy::Kr;
  if (s == "onelayer") return Strategy::OneLayer;
  throw std::invalid_argument("unknown strategy '" + s + "' (auto, scan, kr or onelayer)");
}

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::Auto:
      return "auto";
    case Strategy::Scan:
      return "scan";
    case Strategy::Kr:
      return "kr";
    case Strategy::OneLayer:
      return "onelayer";
  }
  return "?";
}

std::vector<std::string> vocabulary_of(const Automaton& automaton) {
  std::vector<std::string> vocab{"<bos>"};
  vocab.insert(vocab.end(), automaton.letters().begin(), automaton.letters().end());
  return vocab;
}

Norm norm_from_string(const std::string& s) {
  if (s == "none") return Norm::None;
  if (s == "layernorm") return Norm::LayerNorm;
  throw std::invalid_argument("unknown norm '" + s + "' (none or layernorm)");
}

const char* to_string(Norm n) { return n == Norm::LayerNorm ? "layernorm" : "none"; }

namespace {

float select_sharpness(const CompileOptions& options) {
  return options.norm == Norm::LayerNorm ? kLayerNormSharpness : kSelectSharpness;
}

Network finish(const Program& program, const Automaton& automaton, const CompileOptions& options,
               Strategy strategy) {
  Network net = assemble(program, schedule(program));
  net.attention = options.attention;
  net.automaton = automaton_to_json(automaton);
  net.compiler = {{"strategy", to_string(strategy)}, {"krc_version", kVersion}};
  return net;
}

CompileResult compile_scan(const Automaton& automaton, const CompileOptions& options) {
  if (options.progress) options.progress("building the parallel-prefix network");
  const ScanChoice choice =
      plan_scan(automaton, options.max_len, scan_integer_form_allowed(options));
  CompileResult result;
  result.network =
      finish(build_scan(automaton, options.max_len, choice, select_sharpness(options)), automaton,
             options, Strategy::Scan);
  result.network.compiler["scan"] = to_json(choice.plan);
  result.scan = choice.plan;
  result.strategy = Strategy::Scan;
  result.reason = "parallel prefix over the letters' transformations (requested)";
  return result;
}

// Under auto, the holonomy decomposition stops past this many images of Q: the tile search
// costs about images x classes subset tests (the 55-state TCP model: 114,377 images, 45 s,
// then 197 levels whose tables do not fit), and a cascade that deep has more layers than scan.
constexpr std::size_t kAutoMaxImages = std::size_t{1} << 14;

// Scan's depth, known from its plan alone: a cascade or onelayer plan deeper than that is
// not built under auto (layers decide first).
int scan_layers(const Automaton& automaton, int max_len) {
  return plan_scan(automaton, max_len).plan.steps;
}

CompileResult compile_kr(const Automaton& automaton, const CompileOptions& options,
                         int deepest = -1) {
  // A clamped walk (gridworld) needs no decomposition: two layers for any number of cells.
  if (auto walk =
          options.kr.clamped_walk ? plan_clamped_walk(automaton, options.max_len) : std::nullopt) {
    if (options.progress) options.progress("building the clamped-walk network");
    CompileResult result;
    result.kr = std::move(walk);
    result.network =
        finish(build_clamped_walk(automaton, *result.kr), automaton, options, Strategy::Kr);
    result.network.compiler["cascade"] = to_json(*result.kr);
    result.strategy = Strategy::Kr;
    result.reason = "Krohn-Rhodes strategy, clamped walk on a path (requested)";
    return result;
  }
  DecomposeOptions decompose;
  decompose.progress = options.progress;
  if (options.strategy == Strategy::Auto) decompose.max_images = kAutoMaxImages;
  if (options.progress) options.progress("decomposing (holonomy)");
  // The cascade network is built from the complete action tables; scan needs no tables.
  const auto dec = [&] {
    try {
      return HolonomyDecomposition::compute(automaton, decompose);
    } catch (const LimitError& e) {
      // The hint helps where kr was asked for; under auto, scan's own outcome is reported too.
      if (options.strategy != Strategy::Kr) throw;
      throw LimitError(std::string(e.what()) +
                       "; the kr strategy needs the complete action tables, "
                       "--strategy scan does not");
    }
  }();
  if (options.progress) options.progress("building the Krohn-Rhodes cascade network");
  CompileResult result;
  result.kr = plan_kr(dec, options.max_len, options.kr);
  if (deepest >= 0 && result.kr->layers > deepest)
    throw LimitError("kr: its plan has " + std::to_string(result.kr->layers) +
                     " layers, more than scan's " + std::to_string(deepest));
  KrOptions kr = options.kr;
  kr.select_sharpness = select_sharpness(options);
  result.network = finish(build_kr(dec, *result.kr, kr), automaton, options, Strategy::Kr);
  result.network.compiler["cascade"] = to_json(*result.kr);
  result.strategy = Strategy::Kr;
  result.reason = "Krohn-Rhodes cascade (requested)";
  return result;
}

CompileResult compile_onelayer(const Automaton& automaton, const CompileOptions& options) {
  if (options.progress) options.progress("planning the one-layer contextual mapping");
  CompileResult result;
  result.onelayer = plan_onelayer(automaton, options.max_len, options.onelayer);
  result.network =
      finish(build_onelayer(automaton, *result.onelayer), automaton, options, Strategy::OneLayer);
  result.network.compiler["onelayer"] = to_json(*result.onelayer);
  result.strategy = Strategy::OneLayer;
  result.reason = "one attention layer as a contextual mapping (requested)";
  return result;
}

CompileResult compile_one(Strategy strategy, const Automaton& automaton,
                          const CompileOptions& options) {
  check_precision(strategy, options);
  switch (strategy) {
    case Strategy::Scan:
      return compile_scan(automaton, options);
    case Strategy::Kr:
      return compile_kr(automaton, options);
    case Strategy::OneLayer:
      return compile_onelayer(automaton, options);
    case Strategy::Auto:
      break;
  }
  throw std::logic_error("compile_one: auto is not one strategy");
}

// Auto builds every strategy, keeping whichever succeed (each may exceed a limit where the
// others do not: scan's state maps, kr's tables, onelayer's length), and keeps the network with
// the fewest layers, then the fewest parameters. Scan's depth is known from its plan, so a
// cascade whose plan is deeper is not built, and a decomposition past kAutoMaxImages images is
// not attempted.
CompileResult compile_auto(const Automaton& automaton, const CompileOptions& options) {
  struct Candidate {
    Strategy strategy;
    std::optional<CompileResult> result;
    std::string error;
  };
  std::vector<Candidate> candidates;
  int deepest = -1;  // no bound when scan itself does not fit
  try {
    deepest = scan_layers(automaton, options.max_len);
  } catch (const LimitError&) {
  }
  for (Strategy s : {Strategy::Scan, Strategy::Kr, Strategy::OneLayer}) {
    Candidate c{s, std::nullopt, {}};
    try {
      if (s == Strategy::Kr) {  // planned first, built only when it can beat scan's depth
        check_precision(s, options);
        c.result = compile_kr(automaton, options, deepest);
      } else {
        c.result = compile_one(s, automaton, options);
      }
    } catch (const LimitError& e) {
      c.error = e.what();
    }
    candidates.push_back(std::move(c));
  }
  Candidate* best = nullptr;
  std::string built, failed;
  for (auto& c : candidates) {
    if (!c.result) {  // the error may name its strategy already: "onelayer: max-len ..."
      const std::string name = to_string(c.strategy);
      const std::string why =
          c.error.rfind(name + ": ", 0) == 0 ? c.error.substr(name.size() + 2) : c.error;
      failed += "; " + name + " was not possible (" + why + ")";
      continue;
    }
    const auto size = c.result->network.size();
    built += (built.empty() ? std::string("auto: ") + to_string(c.strategy) + " has "
                            : std::string(", ") + to_string(c.strategy) + " ") +
             std::to_string(size.layers) + (built.empty() ? " layers and " : " and ") +
             with_thousands(size.parameters) + (built.empty() ? " parameters" : "");
    if (!best) {
      best = &c;
      continue;
    }
    const auto b = best->result->network.size();
    if (size.layers < b.layers || (size.layers == b.layers && size.parameters < b.parameters))
      best = &c;
  }
  if (!best) {
    std::string all;
    for (const auto& c : candidates) {
      const std::string name = to_string(c.strategy);
      all += (all.empty() ? "" : "; ") +
             (c.error.rfind(name + ": ", 0) == 0 ? c.error : name + ": " + c.error);
    }
    throw LimitError("no strategy fits: " + all);
  }
  CompileResult chosen = std::move(*best->result);
  if (candidates[1].result) chosen.kr = candidates[1].result->kr;  // the cascade, for reports
  if (built.empty()) built = "auto:";
  chosen.reason = built + failed + "; kept " + to_string(chosen.strategy) +
                  " (fewest layers, then fewest parameters)";
  chosen.network.compiler["auto"] = chosen.reason;
  return chosen;
}

}  // namespace

CompileResult compile(const Automaton& automaton, const CompileOptions& options) {
  if (options.max_len < 1) throw std::invalid_argument("max_len must be at least 1");
  CompileResult result = options.strategy == Strategy::Auto
                             ? compile_auto(automaton, options)
                             : compile_one(options.strategy, automaton, options);
  result.network.compiler["precision"] = {{"compiled_for", to_string(options.precision)},
                                          {"exact_in", exact_formats(result)}};
  if (options.norm != Norm::None) result.network.compiler["norm"] = to_string(options.norm);
  return result;
}

}  // namespace krc
