#pragma once
// Hidden units of an MLP that read the same inputs P, each with a weight of one magnitude M and
// a sign pattern of its own, plus a few inputs R_u of their own: a scan's compose units, unit
// (q, j) being ReLU(B (code(j) . x_q - b) + digit) in digit coordinates, or ReLU(code(j) . x_q
// - b + ...) in binary coordinates, which fire only where x_q's bits spell j. A row holds
// n bits of n^2 such units: evaluating each is |Q| times the work of the one that fires.
//
// Why the lookup is exact. Let s be the row's signs on P, S = sum |x_c| and m = min |x_c| over
// P. A unit whose pattern differs from s in a set D of inputs has
//   sum_P w_uc x_c = M (S - 2 sum_D |x_c|) <= M (S - 2m),
// the inputs that every unit reads with one weight (the constant feature that carries a bias)
// add exactly C = sum w_c x_c, and its other inputs add at most W X, with W = max_u sum_{R_u}
// |w_uc| and X the largest |x_c| over R = union of the R_u. So its pre-activation is at most
// U = M (S - 2m) + C + W X + max_u b_u. Where U is below zero by more than any arithmetic's
// rounding of the unit's sum (4 gamma (M S + sum |w_c x_c| + W X + max |b_u|), gamma =
// (inputs + 2) 2^-24, the float32 bound doubled
// twice), every such unit is <= 0 in float32 and float64 alike and adds an exact 0: only the
// units whose pattern is s can be positive, and a binary search finds them. Where U is not
// (a zero or tiny input on P, large inputs on R), every unit of the group is a candidate, as
// before. Either way the candidates are evaluated from their own weights as every other unit
// is, so the results are those of evaluating every unit, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "forward/held_bytes.hpp"

namespace krc {

class SignPatternUnits {
 public:
  struct Unit {
    std::uint64_t pattern = 0;  // bit k: the weight on pattern_dims[k] is positive
    int unit = 0;
    bool operator<(const Unit& o) const {
      return pattern != o.pattern ? pattern < o.pattern : unit < o.unit;
    }
  };
  struct Bounds {
    double magnitude = 0;     // M
    double rest_weight = 0;   // W
    double largest_bias = 0;  // max b_u
    double largest_abs_bias = 0;
    int inputs = 0;     // the most inputs one unit reads
    int rest_set = -1;  // index of R among the MLP's rest sets; -1 where W = 0
  };

  SignPatternUnits(std::vector<int> pattern_dims, std::vector<std::pair<int, float>> common,
                   std::vector<Unit> units, const Bounds& bounds)
      : pattern_dims_(std::move(pattern_dims)),
        common_(std::move(common)),
        units_(std::move(units)),
        bounds_(bounds) {
    std::sort(units_.begin(), units_.end());
  }

  const std::vector<int>& pattern_dims() const { return pattern_dims_; }
  const Bounds& bounds() const { return bounds_; }
  const std::vector<Unit>& units() const { return units_; }
  std::size_t size() const { return units_.size(); }
  std::uint64_t bytes() const {  // what it holds on the heap (held_bytes.hpp)
    return held_bytes(pattern_dims_) + held_bytes(common_) + held_bytes(units_);
  }

  // f(unit) for every unit whose pre-activation can be positive on `row`, where rest_input is
  // the largest |x_c| over the rest set (ignored where W = 0). Returns whether the pattern
  // decided (false: every unit was a candidate).
  template <typename Act, typename F>
  bool each_possibly_active(const Act* row, double rest_input, F f) const {
    double total = 0.0, least = std::numeric_limits<double>::infinity();
    std::uint64_t pattern = 0;
    bool decided = true;
    for (std::size_t k = 0; k < pattern_dims_.size(); ++k) {
      const double v = static_cast<double>(row[pattern_dims_[k]]);
      if (!(v != 0.0) || !std::isfinite(v)) {
        decided = false;
        break;
      }
      total += std::abs(v);
      least = std::min(least, std::abs(v));
      if (v > 0.0) pattern |= std::uint64_t{1} << k;
    }
    if (decided) {
      const Bounds& b = bounds_;
      double common = 0.0, common_size = 0.0;
      for (const auto& [c, w] : common_) {
        common += static_cast<double>(w) * static_cast<double>(row[c]);
        common_size += std::abs(static_cast<double>(w) * static_cast<double>(row[c]));
      }
      const double rest = b.rest_weight > 0.0 ? b.rest_weight * rest_input : 0.0;
      const double bound = b.magnitude * (total - 2.0 * least) + common + rest + b.largest_bias;
      const double gamma = (static_cast<double>(b.inputs) + 2.0) * 0x1p-24;
      const double slack =
          4.0 * gamma * (b.magnitude * total + common_size + rest + b.largest_abs_bias);
      decided = bound + slack + 1e-30 < 0.0;
    }
    if (!decided) {
      for (const Unit& u : units_) f(u.unit);
      return false;
    }
    auto it = std::lower_bound(units_.begin(), units_.end(), Unit{pattern, -1});
    for (; it != units_.end() && it->pattern == pattern; ++it) f(it->unit);
    return true;
  }

 private:
  std::vector<int> pattern_dims_;              // P, ascending
  std::vector<std::pair<int, float>> common_;  // inputs every unit reads with this weight
  std::vector<Unit> units_;                    // by pattern
  Bounds bounds_;
};

}  // namespace krc
