// Sorting a code's values into runs and placing the decoding thresholds. The float32 bound
// itself (relative_error) is derived in onelayer_plan.cpp's opening comment, steps 1-4; the
// thresholds here are its steps 5-6.
#include "strategies/onelayer/value_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "krc/automata/thousands.hpp"

namespace krc {

namespace {

constexpr double kUnit = 0x1p-24;      // u: float32's unit roundoff
constexpr double kExpError = 0x1p-21;  // 4 ulps: the float32 exp the bound assumes
constexpr double kDoubleSlack = 0x1p-53;

// Prefix values and states, sorted by value.
struct Sorted {
  std::vector<double> value;
  std::vector<StateId> state;
};

Sorted sorted(ValueTable table) {
  std::vector<std::size_t> order(table.value.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return table.value[a] < table.value[b] ||
           (table.value[a] == table.value[b] && table.state[a] < table.state[b]);
  });
  Sorted out;
  out.value.reserve(order.size());
  out.state.reserve(order.size());
  for (std::size_t i : order) {
    out.value.push_back(table.value[i]);
    out.state.push_back(table.state[i]);
  }
  return out;
}

// The float32 threshold between a run ending at lo and one starting at hi, or nullopt when
// the error intervals [lo (1 - k), lo (1 + k)] and [hi (1 - k), hi (1 + k)] leave no float
// between them. The threshold sits in the middle of the free interval; the gain makes
// gain * (z - theta) >= 1 for every z >= hi (1 - k), after z - theta is rounded down.
std::optional<ValueThreshold> threshold_between(double lo, double hi, double k) {
  const double below = lo * (1.0 + k), above = hi * (1.0 - k);
  if (!(above > below)) return std::nullopt;
  float theta = static_cast<float>(below + (above - below) / 2.0);
  if (double(theta) < below) theta = std::nextafter(theta, std::numeric_limits<float>::max());
  if (!(double(theta) < above)) return std::nullopt;
  const double least_step = (above - double(theta)) * (1.0 - 0x1p-23);
  const float gain = std::exp2(std::ceil(std::log2(1.0 / least_step)));
  if (!std::isfinite(gain)) return std::nullopt;
  return ValueThreshold{theta, gain};
}

std::string why_float32(double safety) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.3g", safety);
  return std::string("float32 is not exact: at one threshold the values lie only ") + ratio +
         " times the worst-case rounding error apart";
}

// Representable limits of the code itself, before any value is computed.
std::string why_not_representable(const LetterClasses& classes, const CodeChoice& choice,
                                  int max_len, const OneLayerOptions& options) {
  const double size = value_table_size(classes, choice, max_len);
  if (size > double(options.max_values))
    return "the contextual mapping would take " +
           (size < 1e15 ? with_thousands(static_cast<long long>(size)) : std::string("over 1e15")) +
           " values (limit --max-onelayer-values " + with_thousands(options.max_values) + ")";
  if (choice.code == ContextCode::Counts) {
    for (int c : choice.class_code)
      if (c >= (1 << 24) || c < 0)
        return "the letter counts in mixed radix " + std::to_string(max_len + 1) +
               " exceed float32's integers";
  } else if (double(choice.sharpness) * max_len > 80.0) {
    return "the smallest attention weight e^-(lambda L) would leave float32's normal range";
  }
  return {};
}

}  // namespace

double relative_error(ContextCode code, int max_len) {
  const double u = kUnit, t = max_len;
  const double gamma = t * u / (1.0 - t * u);  // a sum of t + 1 terms, any order
  double kappa = (1.0 + kExpError) * std::pow(1.0 + u, 4) * (1.0 + gamma) /
                     ((1.0 - kExpError) * (1.0 - gamma)) -
                 1.0;
  if (code == ContextCode::Counts) {  // the query ln(L+1-t) is rounded to float32
    const double rho = std::expm1(u * std::log(t + 1.0));
    kappa = (1.0 + kappa) / (1.0 - rho) - 1.0;
  }
  return kappa + (2.0 * t + 16.0) * kDoubleSlack;  // the planner's own values are doubles
}

CodeEvaluation evaluate_code(const LetterClasses& classes, StateId initial,
                             const CodeChoice& choice, int max_len,
                             const OneLayerOptions& options) {
  CodeEvaluation e;
  e.choice = choice;
  e.why_not = why_not_representable(classes, choice, max_len, options);
  if (!e.why_not.empty()) return e;
  const Sorted s = sorted(value_table(classes, initial, choice, max_len));
  const double k = relative_error(choice.code, max_len);
  e.relative_error = k;
  e.safety = std::numeric_limits<double>::infinity();
  std::vector<char> reached(classes.action.at(0).size(), 0);  // per state
  e.run_states.push_back(static_cast<int>(s.state[0]));
  for (std::size_t i = 0; i < s.value.size(); ++i) {
    reached.at(s.state[i]) = 1;
    if (i == 0 || s.value[i] != s.value[i - 1]) ++e.values;
    if (i == 0 || s.state[i] == s.state[i - 1]) continue;
    const double lo = s.value[i - 1], hi = s.value[i];
    e.safety = std::min(e.safety, (hi - lo) / (k * (hi + lo)));
    const auto threshold = threshold_between(lo, hi, k);
    if (!threshold) {
      e.why_not = lo == hi ? "two prefixes with different states get the same value"
                           : why_float32(e.safety);
      return e;
    }
    e.thresholds.push_back(*threshold);
    e.run_states.push_back(static_cast<int>(s.state[i]));
  }
  e.reachable_states = std::count(reached.begin(), reached.end(), 1);
  if (e.safety < 1.0) {  // a float fitted, but the margin relies on less than the bound
    e.why_not = why_float32(e.safety);
    return e;
  }
  if (2 * static_cast<long long>(e.thresholds.size()) > options.max_units) {
    e.why_not = "the decoding would need " +
                with_thousands(2 * static_cast<long long>(e.thresholds.size())) +
                " hidden units (limit --max-onelayer-units " + with_thousands(options.max_units) +
                ")";
    return e;
  }
  e.fits = true;
  return e;
}

}  // namespace krc
