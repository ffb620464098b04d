#pragma once
// Internal to the onelayer strategy: one code candidate judged at one length L — its values
// sorted into runs of one state, the float32 thresholds between the runs, and whether it fits
// the limits (see onelayer_plan.cpp for why the thresholds are exact).
#include <optional>
#include <string>
#include <vector>

#include "krc/backend/plan.hpp"
#include "strategies/onelayer/context_values.hpp"

namespace krc {

// The worst-case relative float32 error of the head's value for prefixes of up to L letters
// (onelayer_plan.cpp derives it), including the planner's own double-precision slack.
double relative_error(ContextCode code, int max_len);

struct CodeEvaluation {
  CodeChoice choice;
  bool fits = false;
  std::string why_not;  // when it does not fit: the limit it exceeds, as a user reads it
  long long values = 0;
  long long reachable_states = 0;
  std::vector<ValueThreshold> thresholds;
  std::vector<int> run_states;
  double relative_error = 0.0;
  double safety = 0.0;
};

CodeEvaluation evaluate_code(const LetterClasses& classes, StateId initial,
                             const CodeChoice& choice, int max_len, const OneLayerOptions& options);

}  // namespace krc
