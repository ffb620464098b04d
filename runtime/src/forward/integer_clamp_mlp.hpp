#pragma once
// Internal to the runtime. An MLP made of integer *clamp pairs*, evaluated in O(log n) per
// output instead of O(units), with the float32 result of the dense formula bit for bit.
//
// The form. Every weight and bias is an integer, every unit writes at most one output, and
// the units come as consecutive pairs (u, u + 1) with the same input weights, one output o
// and output weights w, -w: with b_hi > b_lo their biases (the unit of b_hi carries w),
//   w ReLU(z + b_hi) - w ReLU(z + b_lo) = w clamp(z + b_hi, 0, b_hi - b_lo),   z = W1[u] . x,
// and the units left over are singles. The integer scan's compose step is this form
// (compiler/backend/src/primitives/integer_compose.hpp): for each target q, n pairs u1(s),
// u2(s) reading y_s - K x_q (gap K) and one single u3. An output's pairs mostly share one
// input with one weight, the *pivot* (x_q, -K): z = p + r with p = pivot weight * x_pivot and
// the rest r bounded by W M, W = the largest sum of |non-pivot weights| of o's pairs and M =
// max |x| over the inputs. A pair with p + b_lo - W M > 0 is certainly saturated (both
// units active: worth w (b_hi - b_lo)); one with p + b_lo + G + W M <= 0 (G: o's widest
// gap) is certainly 0. With o's pairs sorted by b_lo these are a suffix (summed from
// precomputed suffix sums) and a prefix (skipped); only the window between is evaluated unit
// by unit. For the compose step (W = 1, M <= n, gaps and spacing K >= 2n) that is at most 3
// pairs per output, plus u3.
//
// Why it is the float32 result of the dense formula (runtime/README.md, "Arithmetic": each
// pre-activation a float32 running sum over its inputs in order plus the bias, each output a
// float32 running sum of fl(h_u w_ou) over the active units in ascending order, from +0). A row
// qualifies when every input the MLP reads is an integer with |x| <= M_max. Then:
//  1. A pre-activation's partial sums are integers of magnitude <= A_u M + |b_u| (A_u = sum of
//     |weights|), which M_max keeps <= 2^24: every float32 operation on them is exact, so
//     float32 decides ReLU as the integers do and h_u is the exact integer.
//  2. In one output's sequence of terms in unit order, a partial sum is whole pairs (each in
//     [0, w gap], sign of w), at most one pair cut after its first unit, and some singles:
//     |partial| <= sum_pairs |w| gap + max_pairs |w| (A M + max|b|) + sum_singles |w| (A M + |b|)
//     = alpha_o M + beta_o <= 2^24 for M <= M_max. Every term and every partial sum is an
//     integer within 2^24, so each float32 addition is exact and the running sum is the exact
//     sum, whatever the order of the terms within it. So is this class's float64 sum of the
//     same integers (exact below 2^53), in its own order; converted to float32 it is the same
//     number. A zero is +0 in both: terms are nonzero, and a float32 running sum from +0 that
//     cancels gives +0.
// A row that does not qualify (a softmax trace, a value past M_max) goes the general way.
#include <cstdint>
#include <optional>
#include <vector>

namespace krc {

struct PreparedMlp;

class IntegerClampMlp {
 public:
  // The form of `mlp`, or nothing when it is not of it (or no M >= 1 keeps it exact).
  static std::optional<IntegerClampMlp> of(const PreparedMlp& mlp);

  // out[o] = sum_u W2[o, u] ReLU(W1[u] . row + b1[u]) as float32 sums it, for every output o
  // of the units, when the row qualifies (true); else false, and `out` is untouched.
  bool evaluate(const PreparedMlp& mlp, const float* row, float* out) const;

  double largest_input() const { return largest_input_; }  // M_max
  // The work of one row, in multiply-adds (for the verifier's time estimate): the inputs'
  // check, and per output two binary searches, about 3 window pairs and its singles.
  double row_work() const;
  std::uint64_t bytes() const;  // what it holds on the heap (held_bytes.hpp)

 private:
  // A unit's pre-activation z + b = p + other_weight x[other] + b, times high_weight (a pair's:
  // its upper unit): other >= 0 one input beside the pivot, -1 none, -2 another form (then
  // read from the unit's own weights).
  struct Lane {
    int other = -2;
    float other_weight = 0, high_bias = 0, high_weight = 0;
  };
  struct Output {
    int dim = 0;
    int pivot = -1;  // the input all pairs read with pivot_weight; -1: none
    double pivot_weight = 0, spread = 0, widest_gap = 0;  // spread: W above
    std::vector<float> low_bias;                          // per pair, ascending
    double step = 0;        // > 0: low_bias[k] = low_bias[0] + k step exactly (no search)
    std::vector<int> pair;  // its first unit
    // [k]: sum of w gap over pairs k.. (one more entry); integers within beta <= 2^24, exact.
    std::vector<float> saturated_from;
    std::vector<Lane> lanes;  // per pair: what the window needs, in one place
    std::vector<int> singles;
    std::vector<Lane> single_lanes;  // per single, its own bias and output weight
  };
  struct Builder;

  double sum(const PreparedMlp& mlp, const Output& o, const float* row, double m) const;
  static Lane lane(const PreparedMlp& mlp, const Output& o, int u, int unit);
  // How many pairs of o have low_bias <= v (std::upper_bound's index).
  static std::ptrdiff_t at_most(const Output& o, double v, std::ptrdiff_t from);

  std::vector<Output> outputs_;
  std::vector<int> reads_;  // every input dim a unit reads
  double largest_input_ = 0;
};

}  // namespace krc
