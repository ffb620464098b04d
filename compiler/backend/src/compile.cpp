#include "krc/backend/compile.hpp"

#include <optional>
#include <stdexcept>

#include "ir/assemble.hpp"
#include "ir/schedule.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/automata/version.hpp"
#include "precision_plan.hpp"
#include "strategies/scan_strategy.hpp"
#include "strategies/strategy.hpp"

namespace krc {

namespace {

// The plan's network: its operations scheduled into layers and assembled, with the metadata
// every weights file carries.
CompileResult build_network(const Plan& plan, const Automaton& automaton,
                            const CompileOptions& options) {
  const std::shared_ptr<const Program> program = build(plan);
  CompileResult result;
  result.network = assemble(*program, schedule(*program));
  result.network.attention = options.attention;
  result.network.automaton = automaton_to_json(automaton);
  report(plan, result);
  result.network.compiler["strategy"] = to_string(result.strategy);
  result.network.compiler["krc_version"] = kVersion;
  return result;
}

CompileResult compile_one(Strategy strategy, const Automaton& automaton,
                          const CompileOptions& options) {
  return build_network(plan(automaton, options, strategy), automaton, options);
}

// Auto's candidates: each strategy's network, or why it was not possible.
struct Candidate {
  Strategy strategy;
  std::optional<CompileResult> result;
  std::string error;
};

// Scan's depth, known from its plan alone (no bound when scan itself does not fit): a cascade
// whose plan is deeper is not assembled under auto (layers decide first). With why scan does
// not fit, when it does not.
struct ScanDepth {
  int steps = -1;
  std::string error;
};
ScanDepth scan_depth(const Automaton& automaton, int max_len) {
  try {
    const MemoryPhase phase("planning the parallel-prefix network");
    return {plan_scan(automaton, max_len).plan.steps, {}};
  } catch (const LimitError& e) {
    return {-1, e.what()};
  }
}

Candidate try_strategy(Strategy strategy, const Automaton& automaton, const CompileOptions& options,
                       int deepest) {
  Candidate c{strategy, std::nullopt, {}};
  try {
    const Plan planned = plan(automaton, options, strategy);
    const std::optional<int> layers = cascade_layers(planned);
    if (deepest >= 0 && layers && *layers > deepest)
      throw LimitError("kr: its plan has " + std::to_string(*layers) +
                       " layers, more than scan's " + std::to_string(deepest));
    c.result = build_network(planned, automaton, options);
  } catch (const LimitError& e) {
    c.error = e.what();
  }
  return c;
}

// An error without its strategy's prefix ("onelayer: max-len ..." -> "max-len ...").
std::string without_name(const Candidate& c) {
  const std::string name = to_string(c.strategy);
  return c.error.rfind(name + ": ", 0) == 0 ? c.error.substr(name.size() + 2) : c.error;
}

// "auto: scan has 6 layers and 1,234 parameters, kr 3 and 567; onelayer was not possible (...)"
std::string comparison(const std::vector<Candidate>& candidates) {
  std::string built, failed;
  for (const auto& c : candidates) {
    const std::string name = to_string(c.strategy);
    if (!c.result) {
      failed += "; " + name + " was not possible (" + without_name(c) + ")";
      continue;
    }
    const auto size = c.result->network.size();
    built += (built.empty() ? "auto: " + name + " has " : ", " + name + " ") +
             std::to_string(size.layers) + (built.empty() ? " layers and " : " and ") +
             with_thousands(size.parameters) + (built.empty() ? " parameters" : "");
  }
  return (built.empty() ? "auto:" : built) + failed;
}

// The fewest layers, then the fewest parameters; the earliest candidate on a tie.
Candidate* best_of(std::vector<Candidate>& candidates) {
  Candidate* best = nullptr;
  for (auto& c : candidates) {
    if (!c.result) continue;
    const auto size = c.result->network.size();
    if (!best) {
      best = &c;
      continue;
    }
    const auto b = best->result->network.size();
    if (size.layers < b.layers || (size.layers == b.layers && size.parameters < b.parameters))
      best = &c;
  }
  return best;
}

// Auto plans and builds every strategy, keeping whichever succeed (each may exceed a limit
// where the others do not: scan's state maps, kr's tables, onelayer's length), and keeps the
// network with the fewest layers, then the fewest parameters. A cascade whose plan is deeper
// than scan's is not assembled, and a decomposition past auto's image bound is not attempted.
CompileResult compile_auto(const Automaton& automaton, const CompileOptions& options) {
  const ScanDepth scan = scan_depth(automaton, options.max_len);
  std::vector<Candidate> candidates;
  // Scan's plan for float32 is the one scan_depth made (plan_scan allows the integer form there):
  // where it did not fit, it is not planned again (a 10,000-state prefix-tree acceptor's monoid
  // was enumerated twice before both refusals; issue 31).
  if (!scan.error.empty() && scan_integer_form_allowed(options))
    candidates.push_back({Strategy::Scan, std::nullopt, scan.error});
  else
    candidates.push_back(try_strategy(Strategy::Scan, automaton, options, scan.steps));
  for (Strategy s : {Strategy::Kr, Strategy::OneLayer})
    candidates.push_back(try_strategy(s, automaton, options, scan.steps));
  Candidate* best = best_of(candidates);
  if (!best) {
    std::string all;
    for (const auto& c : candidates)
      all +=
          (all.empty() ? "" : "; ") + std::string(to_string(c.strategy)) + ": " + without_name(c);
    throw LimitError("no strategy fits: " + all);
  }
  const std::string compared = comparison(candidates);  // before the best one is moved out
  CompileResult chosen = std::move(*best->result);
  for (const auto& c : candidates)  // the kr strategy's plan, for reports
    if (c.strategy == Strategy::Kr && c.result && &c != best) {
      chosen.kr = c.result->kr;
      chosen.walk = c.result->walk;
    }
  chosen.reason = compared + "; kept " + to_string(chosen.strategy) +
                  " (fewest layers, then fewest parameters)";
  chosen.network.compiler["auto"] = chosen.reason;
  return chosen;
}

}  // namespace

CompileResult compile(const Automaton& automaton, const CompileOptions& options) {
  if (options.max_len < 1) throw std::invalid_argument("max_len must be at least 1");
  // Auto compares the strategies' networks; without letters there is one, planned under any.
  const bool compare = options.strategy == Strategy::Auto && automaton.letter_count() > 0;
  CompileResult result = compare ? compile_auto(automaton, options)
                                 : compile_one(options.strategy, automaton, options);
  result.network.compiler["precision"] = {{"compiled_for", to_string(options.precision)},
                                          {"exact_in", exact_formats(result)}};
  if (options.norm != Norm::None) result.network.compiler["norm"] = to_string(options.norm);
  return result;
}

}  // namespace krc
