#pragma once
// Composing transformations held as integer coordinates, in one MLP that is exact on the
// integer grid: the step of the parallel prefix's integer-coordinate form
// (primitives/prefix_scan.hpp), at Liu et al.'s Theorem 1 size (O(n^2) units).
//
// Legend: X = {0..n-1}; f, g: X -> X, held as the integers f(q) + 1 and g(q) + 1 in 1..n (never
// 0: a fetched copy, within e^-40 of an integer >= 1, rounds to that integer in float32, so no
// softmax noise enters); x_q = f(q) + 1, the earlier map (fetched); y_s = g(s - 1) + 1 for
// s = 1..n, the later map (current); "first f, then g" sends q to g(f(q)), held as y_{x_q}.
// K is the slope, a multiple of 4 with K >= 2n (so K/4 is an integer).
//
// Composition (add_integer_compose_units). For q and every s in 1..n,
//   u1(s) = ReLU(y_s - K(x_q - s) + K/4),   u2(s) = ReLU(y_s - K(x_q - s) - 3K/4).
// At x_q = s: u1 = y_s + K/4 and u2 = 0 (y_s <= n < 3K/4). At x_q <= s - 1 both are active and
// u1 - u2 = K. At x_q >= s + 1 both are 0 (y_s - K + K/4 <= n - 3K/4 < 0). So
//   sum_s (u1 - u2) = y_{x_q} + K/4 + K(n - x_q),
// and with u3 = ReLU(y_q + K(n + 1/4) - K x_q), always active (its argument is at least K/4),
//   sum_s (u1 - u2) - u3 = y_{x_q} - y_q:
// added to y_q it leaves g(f(q)) + 1 in place. 2n + 1 units per q. The kinks lie at x_q - s =
// 1/4 + y_s/K in [1/4, 3/4] (u1), -3/4 + y_s/K in [-3/4, -1/4] (u2) and x_q >= n + 1/4 (u3), so
// none is within 1/4 of an integer 1..n; there the active units' slopes in x_q (-K each:
// n + 1 - i of u1, minus n - i of u2, minus u3) cancel, and an error in x_q below 1/4 does not
// move the output at all. An error in y passes with weight 1.
//
// One-hot result (add_integer_one_hot_units): [y_x = v] for every v in 1..n, with L >= n:
//   h_c(s, v) = ReLU(y_s - v + c - L(x - s)) for c = 1, 0, -1, written as h_1 - 2 h_0 + h_-1.
// At x = s this is the tent of y_s - v: 1 at y_s = v, 0 at every other integer. At x >= s + 1
// all three arguments are <= 0; at x <= s - 1 all three are >= 0 and the combination is 0. So
// 3 n^2 units write the one-hot of g(f(q)) for one q.
//
// Float32. With integer inputs, every pre-activation, unit and output term is an integer, and
// a float32 sum of integers is exact, in any order, while the sum of their magnitudes stays
// at most 2^24 (every partial sum is an integer no larger). The *_magnitude functions give that
// sum for the worst inputs (x = 1, every y = n), including the value updated in place:
// about 2 n^3, so both stay exact in any order up to n = 202
// (integer_coordinates_exact_any_order).
//
// In unit order. The large terms cancel in neighbours: u1(s) and u2(s) are added one after the
// other (their difference is 0, K or y_s + K/4), and so are the three units of a tent. A plain
// float32 framework sums an output's terms in unit order (sequentially, or in blocks of
// consecutive units, then the blocks: runtime/README.md, "Arithmetic"), so every partial sum
// it forms is the sum of a run of consecutive terms. The *_run_bound functions bound every such
// run (about 4 n^2 and 2 n^2); each is an integer, so every partial sum is exact while the
// bound is at most 2^24: up to n = 2047 (integer_coordinates_exact). A framework that sums the
// units in some other order (strided SIMD lanes over the hidden units) could round beyond 202.
#include <vector>

#include "ir/program.hpp"

namespace krc {

inline constexpr double kFloat32ExactIntegers = 16777216.0;  // 2^24

int integer_compose_slope(int n);  // K = 4 ceil(n / 2)

// For each q in `targets`: current[q] += y_{x_q} - y_q, x from `earlier`, y from `current`
// (both n dimensions holding integers 1..n). 2n + 1 units per target.
void add_integer_compose_units(MlpOp& mlp, const Subspace& earlier, const Subspace& current,
                               const std::vector<int>& targets);

// out[v - 1] += [y_x = v] for every v in 1..n, x from the dimension `earlier` and y from
// `current`; `out` has n dimensions. 3 n^2 units.
void add_integer_one_hot_units(MlpOp& mlp, int earlier, const Subspace& current,
                               const Subspace& out);

// The largest sum of magnitudes that one output of these units accumulates (see above).
double integer_compose_magnitude(int n);
double integer_one_hot_magnitude(int n);

// The largest magnitude of a sum of consecutive terms of one output, in unit order.
double integer_compose_run_bound(int n);
double integer_one_hot_run_bound(int n);
// The largest sum of magnitudes of one unit's pre-activation terms.
double integer_preactivation_bound(int n);

// Whether every partial sum stays within float32's exact integers, in any order, or in unit
// order (sequential or blocked sums: what the planner requires).
bool integer_coordinates_exact_any_order(int n);
bool integer_coordinates_exact(int n);

}  // namespace krc
