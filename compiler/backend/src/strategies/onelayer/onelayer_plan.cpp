// The onelayer plan (krc/backend/plan.hpp): which code the one attention head uses, where the
// decoding thresholds go, and the largest max_len that stays exact. Legend: L = max_len, t a
// prefix's length, z the head's value, u = 2^-24 (float32's unit roundoff), gamma_t = t u / (1 - t
// u).
//
// Why the network is exact in float32, for the textbook softmax (max, exp, sum, divide or
// multiply by the reciprocal) with float32 accumulation in any order, worst case:
//  1. Scores are exact. Positional codes: the query lambda (a multiple of 1/256) times the key j
//     (an integer <= L <= 80/lambda), so lambda j and lambda (j - t) are exact. Counts: the
//     query q_t = fl(ln(L + 1 - t)) times the BOS flag, 0 or 1.
//  2. exp(s_j - max) is within 4 ulps (2^-21 relative) of the real value: glibc, numpy, Sleef
//     (PyTorch on CPU) and CUDA's expf are; CUDA's fast-math __expf is not covered.
//  3. The denominator sums t + 1 positive terms: relative error <= gamma_t. Normalising costs
//     at most 2 roundings.
//  4. The values are non-negative (BOS 0, letters their digit or count weight), so the weighted
//     sum of t + 1 terms is off by at most gamma_t relative, plus one rounding per product and
//     one for the output projection. Together: z = z_exact (1 + theta) with
//       |theta| <= kappa_L = (1 + 2^-21)(1 + u)^4 (1 + gamma_L) / ((1 - 2^-21)(1 - gamma_L)) - 1,
//     relative to z itself. Counts' weights use the rounded q_t: e^q_t is within a factor
//     e^(+-u ln(L+1)) of L + 1 - t, which moves z by a factor within 1/(1 - rho),
//     rho = e^(u ln(L+1)) - 1. About (2L + 20) u in all: 2.6e-6 at L = 12.
//  5. Sorted by exact value, the prefixes fall into runs of one state. Between the last value
//     lo of a run and the first value hi of the next, a float32 threshold theta with
//     lo (1 + kappa) <= theta < hi (1 - kappa) exists when (hi - lo) / (kappa (hi + lo)) > 1:
//     that ratio's minimum is the plan's `safety`, and a plan needs it >= 1.
//  6. Decoding: y = ReLU(z - theta) is exactly 0 below (rounding keeps the sign of z - theta)
//     and at least (hi (1 - kappa) - theta)(1 - 2^-23) above; s = ReLU(1 - gain y), gain a power
//     of two >= 1 / that, is then exactly 1 or exactly 0, and each state's logit is a sum of
//     +-s and one constant: a small integer, exact. The right state scores 1, the others 0.
// The values themselves are computed here in double; their relative error (below (2L + 16)
// 2^-53) is added to kappa.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/thousands.hpp"
#include "strategies/onelayer/context_values.hpp"
#include "strategies/onelayer/value_runs.hpp"

namespace krc {

namespace {

struct Search {
  const Automaton& automaton;
  const OneLayerOptions& options;
  LetterClasses classes;

  std::vector<CodeEvaluation> evaluate_all(int max_len) const {
    std::vector<CodeEvaluation> out;
    for (const auto& choice : code_choices(classes, max_len))
      out.push_back(evaluate_code(classes, automaton.initial(), choice, max_len, options));
    return out;
  }
  // The fitting evaluation with the fewest units (ties: the larger safety), if any.
  static const CodeEvaluation* best(const std::vector<CodeEvaluation>& all) {
    const CodeEvaluation* best = nullptr;
    for (const auto& e : all)
      if (e.fits && (!best || e.thresholds.size() < best->thresholds.size() ||
                     (e.thresholds.size() == best->thresholds.size() && e.safety > best->safety)))
        best = &e;
    return best;
  }
  bool fits(int max_len) const { return best(evaluate_all(max_len)) != nullptr; }

  // The largest L >= from that fits, given that `from` fits: doubling steps, then bisection.
  int largest_from(int from) const {
    int good = from, step = 1;
    while (good + step <= (1 << 20) && fits(good + step)) {
      good += step;
      step *= 2;
    }
    int bad = std::min(good + step, (1 << 20) + 1);
    while (bad - good > 1) {
      const int mid = good + (bad - good) / 2;
      (fits(mid) ? good : bad) = mid;
    }
    return good;
  }
  // The largest L < below that fits, 0 when not even L = 1 does.
  int largest_below(int below) const {
    int good = 0, bad = below;
    while (bad - good > 1) {
      const int mid = good + (bad - good) / 2;
      (fits(mid) ? good : bad) = mid;
    }
    return good;
  }
  // Why L does not fit: the reason of the code that fits at L - 1 (the one that reaches
  // furthest), else of the first code. Choices come in the same order at every length.
  std::string why_not(int max_len) const {
    const auto at = evaluate_all(max_len);
    if (max_len > 1) {
      const auto before = evaluate_all(max_len - 1);
      if (const CodeEvaluation* b = best(before)) return at.at(b - before.data()).why_not;
    }
    return at.front().why_not;
  }
};

std::string limit_message(const Search& search, int max_len, int largest) {
  const std::string name = search.automaton.name();
  if (largest == 0)
    return "onelayer: no exact one-layer network for " + name +
           ", not even for words of one letter: " + search.why_not(1);
  return "onelayer: max-len " + with_thousands(max_len) +
         " is beyond one exact attention layer for " + name + "; the largest max-len for it is " +
         with_thousands(largest) + " (at " + with_thousands(largest + 1) + ": " +
         search.why_not(largest + 1) + ")";
}

}  // namespace

OneLayerPlan plan_onelayer(const Automaton& automaton, int max_len,
                           const OneLayerOptions& options) {
  if (max_len < 1) throw std::invalid_argument("max_len must be at least 1");
  // No letters, no code to give them: compile() builds the network of no layers instead.
  if (automaton.letter_count() == 0)
    throw LimitError("onelayer: " + empty_alphabet_clause() +
                     "; there is no letter to code (compile builds the network of no layers)");
  Search search{automaton, options, letter_classes(automaton)};
  const auto all = search.evaluate_all(max_len);
  const CodeEvaluation* chosen = Search::best(all);
  if (!chosen) throw LimitError(limit_message(search, max_len, search.largest_below(max_len)));

  OneLayerPlan plan;
  plan.code = chosen->choice.code;
  plan.max_len = max_len;
  plan.largest_len = search.largest_from(max_len);
  plan.classes = chosen->choice.code == ContextCode::Counts ? search.classes.non_identity()
                                                            : search.classes.size();
  for (int c : search.classes.of_letter) plan.letter_code.push_back(chosen->choice.class_code[c]);
  plan.sharpness = chosen->choice.sharpness;
  plan.values = chosen->values;
  plan.transformations = count_transformations(search.classes, max_len, options.max_values);
  plan.reachable_states = chosen->reachable_states;
  plan.thresholds = chosen->thresholds;
  plan.run_states = chosen->run_states;
  plan.relative_error = chosen->relative_error;
  plan.safety = chosen->safety;
  return plan;
}

std::string plan_text(const OneLayerPlan& plan) {
  std::ostringstream out;
  char number[64];
  if (plan.code == ContextCode::Counts) {
    out << "contextual mapping: one rank-1 head summing letter counts (the letters commute)\n";
  } else {
    std::snprintf(number, sizeof number, "%.6g", double(plan.sharpness));
    out << "contextual mapping: one rank-1 head, weights e^("
        << (plan.code == ContextCode::EarliestFirst ? "-" : "") << number << " j), the "
        << (plan.code == ContextCode::LatestFirst ? "latest" : "first")
        << " letter as the leading digit\n";
  }
  out << "  values: " << with_thousands(plan.values) << " for the prefixes of up to "
      << with_thousands(plan.max_len) << " letters; prefixes with one transformation may share: "
      << with_thousands(plan.transformations) << " needed, reaching "
      << with_thousands(plan.reachable_states) << " states\n";
  const auto runs = static_cast<long long>(plan.run_states.size());
  out << "  decoding: " << with_thousands(runs) << (runs == 1 ? " run" : " runs")
      << " of one state, " << with_thousands(runs - 1)
      << (runs == 2 ? " threshold, " : " thresholds, ") << with_thousands(plan.units())
      << " hidden units, " << plan.layers() << (plan.layers() == 1 ? " layer\n" : " layers\n");
  std::snprintf(number, sizeof number, "%.2g", plan.relative_error);
  out << "  float32: worst-case relative error " << number;
  if (!plan.thresholds.empty()) {
    std::snprintf(number, sizeof number, "%.3g", plan.safety);
    out << ", the tightest threshold " << number << "x that";
  }
  out << "; largest max-len " << with_thousands(plan.largest_len) << "\n";
  return out.str();
}

}  // namespace krc
