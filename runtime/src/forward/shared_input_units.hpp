#pragma once
// Hidden units of an MLP that all read the same linear form z = direction . x of the residual
// row, unit u with its own factor and bias: pre-activation a_u z + b_u. The common case is a
// counter's residue comb, 2 units per possible count, each ReLU(z - b) of the count dim z;
// a comb of the count before t reads z = count - increment, the same two dims for all units.
//
// Their contribution to an output dim o is sum_u w_ou ReLU(a_u z + b_u), a piecewise linear
// function of z: a unit with a_u > 0 is active for z > t_u = -b_u / a_u, one with a_u < 0 for
// z < t_u. With each output's units sorted by t_u and prefix sums (a_u > 0) or suffix sums
// (a_u < 0) of w a and w b in float64, the contribution at z is z * A + B over the active
// prefix (suffix), which a binary search finds: O(log n) per output instead of O(n). This is
// the dense formula's sum re-associated (sum_u w a z + w b = z sum w a + sum w b); a unit at
// exactly z = t_u is worth 0 on either side, so ties need no care.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace krc {

struct ScatterRows;

class SharedInputUnits {
 public:
  struct Unit {
    int unit = 0;       // hidden unit index
    double factor = 0;  // a_u, nonzero
    double bias = 0;    // b_u
  };

  // direction: (input dim, coefficient) in ascending dims; out_by_unit: hidden unit ->
  // (output dim, weight).
  SharedInputUnits(std::vector<std::pair<int, double>> direction, const std::vector<Unit>& units,
                   const ScatterRows& out_by_unit);

  const std::vector<std::pair<int, double>>& direction() const { return direction_; }
  const std::vector<int>& units() const { return units_; }

  // z = direction . row, summed in the direction's order (that of the unit's own weights).
  template <typename Act>
  double input(const Act* row) const {
    double z = 0.0;
    for (const auto& [c, coefficient] : direction_) z += coefficient * static_cast<double>(row[c]);
    return z;
  }

  // out[o] += sum_u w_ou ReLU(a_u z + b_u) for every output dim o of these units.
  void add_contribution(double z, double* out) const;
  std::uint64_t bytes() const;  // what it holds on the heap (held_bytes.hpp)

  // f(unit) for every unit that is active somewhere within `slack` of z: a_u > 0 with
  // threshold t_u < z + slack, a_u < 0 with t_u > z - slack (the Float32 arithmetic evaluates
  // these one by one).
  template <typename F>
  void each_possibly_active(double z, double slack, F f) const {
    for (const auto& [threshold, unit] : rising_) {
      if (!(threshold < z + slack)) break;
      f(unit);
    }
    for (auto it = falling_.rbegin(); it != falling_.rend(); ++it) {
      if (!(it->first > z - slack)) break;
      f(it->second);
    }
  }

 private:
  // Units of one side (a_u > 0 or a_u < 0) that write one output, by threshold.
  struct Ramp {
    std::vector<double> threshold;  // ascending
    // slope[k], offset[k]: sums of w a and w b over units [0, k) (rising) or [k, n) (falling).
    std::vector<double> slope, offset;
  };
  struct Output {
    int dim = 0;
    Ramp rising, falling;
  };
  static Ramp ramp(std::vector<std::pair<double, std::pair<double, double>>> units, bool rising);

  std::vector<std::pair<int, double>> direction_;
  std::vector<int> units_;
  std::vector<Output> outputs_;
  std::vector<std::pair<double, int>> rising_, falling_;  // (t_u, unit) by a_u's sign, ascending
  bool active_at_zero_ = false;                           // some b_u > 0: z = 0 still contributes
};

}  // namespace krc
