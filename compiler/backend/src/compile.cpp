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
#include "strategies/kr/clamped_walk.hpp"
#include "strategies/kr/kr_strategy.hpp"
#include "strategies/scan_strategy.hpp"

namespace krc {

Strategy strategy_from_string(const std::string& s) {
  if (s == "auto") return Strategy::Auto;
  if (s == "scan") return Strategy::Scan;
  if (s == "kr") return Strategy::Kr;
  throw std::invalid_argument("unknown strategy '" + s + "' (auto, scan or kr)");
}

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::Auto:
      return "auto";
    case Strategy::Scan:
      return "scan";
    case Strategy::Kr:
      return "kr";
  }
  return "?";
}

std::vector<std::string> vocabulary_of(const Automaton& automaton) {
  std::vector<std::string> vocab{"<bos>"};
  vocab.insert(vocab.end(), automaton.letters().begin(), automaton.letters().end());
  return vocab;
}

namespace {

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
  const ScanChoice choice = plan_scan(automaton, options.max_len);
  CompileResult result;
  result.network =
      finish(build_scan(automaton, options.max_len, choice), automaton, options, Strategy::Scan);
  result.network.compiler["scan"] = to_json(choice.plan);
  result.scan = choice.plan;
  result.strategy = Strategy::Scan;
  result.reason = "parallel prefix over the letters' transformations (requested)";
  return result;
}

CompileResult compile_kr(const Automaton& automaton, const CompileOptions& options) {
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
  result.network = finish(build_kr(dec, *result.kr, options.kr), automaton, options, Strategy::Kr);
  result.network.compiler["cascade"] = to_json(*result.kr);
  result.strategy = Strategy::Kr;
  result.reason = "Krohn-Rhodes cascade (requested)";
  return result;
}

}  // namespace

CompileResult compile(const Automaton& automaton, const CompileOptions& options) {
  if (options.max_len < 1) throw std::invalid_argument("max_len must be at least 1");
  switch (options.strategy) {
    case Strategy::Scan:
      return compile_scan(automaton, options);
    case Strategy::Kr:
      return compile_kr(automaton, options);
    case Strategy::Auto:
      break;
  }
  // Either strategy may exceed a limit where the other does not (a huge state set for scan's
  // state maps, a huge cascade for kr's tables): keep whichever succeeds.
  std::optional<CompileResult> scan_result, kr_result;
  std::string scan_error, kr_error;
  try {
    scan_result = compile_scan(automaton, options);
  } catch (const LimitError& e) {
    scan_error = e.what();
  }
  try {
    kr_result = compile_kr(automaton, options);
  } catch (const LimitError& e) {
    kr_error = e.what();
  }
  if (!scan_result && !kr_result)
    throw LimitError("neither strategy fits: scan: " + scan_error + "; kr: " + kr_error);
  if (!kr_result) {
    scan_result->reason = "auto: kr was not possible (" + kr_error + "); kept scan";
    scan_result->network.compiler["auto"] = scan_result->reason;
    return std::move(*scan_result);
  }
  if (!scan_result) {
    kr_result->reason = "auto: scan was not possible (" + scan_error + "); kept kr";
    kr_result->network.compiler["auto"] = kr_result->reason;
    return std::move(*kr_result);
  }
  CompileResult& scan = *scan_result;
  CompileResult& kr = *kr_result;
  const auto s = scan.network.size();
  const auto k = kr.network.size();
  bool pick_kr = k.layers < s.layers || (k.layers == s.layers && k.parameters < s.parameters);
  CompileResult& chosen = pick_kr ? kr : scan;
  chosen.kr = kr.kr;
  chosen.reason = "auto: kr has " + std::to_string(k.layers) + " layers and " +
                  with_thousands(k.parameters) + " parameters, scan " + std::to_string(s.layers) +
                  " and " + with_thousands(s.parameters) + "; kept " + (pick_kr ? "kr" : "scan") +
                  " (fewer layers, then fewer parameters)";
  chosen.network.compiler["auto"] = chosen.reason;
  return std::move(chosen);
}

}  // namespace krc
