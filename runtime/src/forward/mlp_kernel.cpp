// An MLP over a word, exploiting that compiled MLPs are huge but tiny in effect: each hidden
// unit reads 1-3 inputs and almost all are zero after ReLU.
//
// Which units can be nonzero? Split the row's nonzero inputs into large ones and small ones
// (softmax leaves traces like e^-40 everywhere; they are real values, but tiny). A unit is a
// candidate when a large input touches it, when its bias is positive, or when the small
// inputs together could lift it above zero: bias + max|weight| * L > 0 with L the sum of the
// small inputs' magnitudes (checked with a factor 2 to spare, so rounding cannot matter).
// Every other unit's pre-activation is provably negative. Candidates are evaluated from
// their own weights against the whole row, so the result is the dense formula's. (Without
// small inputs, the sums scattered from the large ones are already complete.)
//
// Units that read one linear form of the row (a counter's residue comb: thousands of units
// on the count) are evaluated apart, in O(log n) per output (shared_input_units.hpp), from the
// whole row, so that neither large nor small inputs concern them.
#include <algorithm>
#include <cmath>

#include "forward/forward_kernels.hpp"

namespace krc::kernels {

namespace {

void touch(MlpScratch& s, int u) {
  if (!s.touched_mark[u]) {
    s.touched_mark[u] = 1;
    s.touched.push_back(u);
  }
}

// Large inputs are scattered into their units' sums; small ones only counted. Returns the sum
// of the small inputs' magnitudes.
template <typename Act>
double scatter_inputs(const PreparedMlp& mlp, const Act* row, MlpScratch& s) {
  const ScatterRows& in = mlp.in_by_input;
  double small_total = 0.0;
  s.small_inputs.clear();
  mlp.reads.for_each([&](int c) {
    const double xv = static_cast<double>(row[c]);
    if (xv == 0.0) return;
    if (std::abs(xv) < mlp.small_input) {
      small_total += std::abs(xv);
      s.small_inputs.push_back(c);
      return;
    }
    for (int e = in.begin(c); e < in.end(c); ++e) {
      touch(s, in.column[e]);
      s.acc[in.column[e]] += in.value[e] * xv;
    }
  });
  return small_total;
}

// The units the small inputs could lift, and those with a positive bias.
void touch_liftable(const PreparedMlp& mlp, double small_total, MlpScratch& s) {
  if (2.0 * small_total >= mlp.low_threshold) {
    for (const auto& [threshold, u] : mlp.units_by_threshold) {
      if (threshold >= 2.0 * small_total) break;
      touch(s, u);
    }
  } else {
    // A unit the small inputs can lift has a threshold below 2L < kLowThreshold and one of
    // them as input.
    const ScatterRows& low = mlp.low_threshold_by_input;
    for (int c : s.small_inputs)
      for (int e = low.begin(c); e < low.end(c); ++e) touch(s, low.column[e]);
  }
  for (int u : mlp.positive_bias_units) touch(s, u);
}

// out += W2 ReLU(pre) over the touched units, which are left untouched (acc zero again).
template <typename Act>
void add_touched_units(const PreparedMlp& mlp, const Act* row, double small_total, MlpScratch& s) {
  const ScatterRows& unit_in = mlp.in_by_unit;
  const ScatterRows& out_w = mlp.out_by_unit;
  for (int u : s.touched) {
    s.touched_mark[u] = 0;
    double pre = s.acc[u] + mlp.in_bias[u];  // exact when there are no small inputs
    s.acc[u] = 0.0;
    if (small_total > 0.0) {
      // The small inputs add at most largest_weight * small_total.
      if (!(pre + 2.0 * small_total * mlp.largest_in_weight[u] > 0.0)) continue;
      pre = 0.0;
      for (int e = unit_in.begin(u); e < unit_in.end(u); ++e)
        pre += unit_in.value[e] * static_cast<double>(row[unit_in.column[e]]);
      pre += mlp.in_bias[u];
    }
    if (!(pre > 0.0)) continue;  // ReLU
    const double h = stored(pre, std::is_same_v<Act, float>);
    for (int e = out_w.begin(u); e < out_w.end(u); ++e)
      s.out[out_w.column[e]] += out_w.value[e] * h;
  }
}

}  // namespace

template <typename Act>
void apply_mlp(const PreparedMlp& mlp, Activations<Act>& x, int from, int n, MlpScratch& s) {
  if (s.acc.size() < static_cast<std::size_t>(mlp.hidden)) {  // grown once; rows leave them zero
    s.touched_mark.resize(mlp.hidden, 0);
    s.acc.resize(mlp.hidden, 0.0);
  }
  s.out.resize(x.cols());
  for (int i = from; i < n; ++i) {
    Act* row = x.row(i).data();
    s.touched.clear();
    const double small_total = scatter_inputs(mlp, row, s);
    touch_liftable(mlp, small_total, s);
    // Sign-pattern units are in no scatter row: their candidates sum their own inputs, in
    // ascending order as the scatter does (adding their zero inputs' +-0 changes no sum).
    s.pattern_lookups += each_sign_pattern_candidate(mlp, row, s.rest_input, [&](int u) {
      touch(s, u);
      double acc = 0.0;
      for (int e = mlp.in_by_unit.begin(u); e < mlp.in_by_unit.end(u); ++e)
        acc += mlp.in_by_unit.value[e] * static_cast<double>(row[mlp.in_by_unit.column[e]]);
      s.acc[u] = acc;
    });
    mlp.writes.for_each([&](int c) { s.out[c] = static_cast<double>(row[c]) + mlp.out_bias[c]; });
    // Their hidden values are not rounded to float32 one by one: only the sums of the
    // re-associated formula exist.
    for (const SharedInputUnits& group : mlp.shared_input)
      group.add_contribution(group.input(row), s.out.data());
    add_touched_units(mlp, row, small_total, s);
    mlp.writes.for_each([&](int c) { row[c] = static_cast<Act>(s.out[c]); });
  }
}

template void apply_mlp<float>(const PreparedMlp&, Activations<float>&, int, int, MlpScratch&);
template void apply_mlp<double>(const PreparedMlp&, Activations<double>&, int, int, MlpScratch&);

}  // namespace krc::kernels
