// The MLP and the unembedding in Arithmetic::Float32 (forward.hpp gives the order of every
// sum). Which hidden units can be nonzero is decided as in mlp_kernel.cpp, by provable bounds
// (conservative by far more than float32 rounding); units that read one linear form z of the
// row (a counter's comb) are taken from their thresholds with a slack that covers the float32
// rounding of their pre-activations. The candidates are then evaluated one by one, in
// ascending order, each pre-activation a float32 sum over its inputs in ascending order:
// a unit left out has a pre-activation <= 0 in float32 too, and adds an exact 0.
#include <algorithm>
#include <bit>
#include <cmath>

#include "forward/float32_kernels.hpp"
#include "forward/forward_kernels.hpp"

namespace krc::kernels::f32 {

namespace {

// Marks the units of row `row` whose float32 pre-activation can be positive.
void find_candidates(const PreparedMlp& mlp, const float* row, MlpScratch& s) {
  auto mark = [&](int u) {
    std::uint64_t& word = s.bits[u >> 6];
    if (word == 0) s.words.push_back(u >> 6);
    word |= std::uint64_t{1} << (u & 63);
  };
  double small_total = 0.0;
  s.small_inputs.clear();
  const ScatterRows& in = mlp.in_by_input;
  mlp.reads.for_each([&](int c) {
    const double xv = row[c];
    if (xv == 0.0) return;
    if (std::abs(xv) < mlp.small_input) {
      small_total += std::abs(xv);
      s.small_inputs.push_back(c);
      return;
    }
    for (int e = in.begin(c); e < in.end(c); ++e) mark(in.column[e]);
  });
  if (2.0 * small_total >= mlp.low_threshold) {
    for (const auto& [threshold, u] : mlp.units_by_threshold) {
      if (threshold >= 2.0 * small_total) break;
      mark(u);
    }
  } else {
    const ScatterRows& low = mlp.low_threshold_by_input;
    for (int c : s.small_inputs)
      for (int e = low.begin(c); e < low.end(c); ++e) mark(low.column[e]);
  }
  for (int u : mlp.positive_bias_units) mark(u);
  for (const SharedInputUnits& group : mlp.shared_input) {
    // A unit's float32 pre-activation errs by at most gamma (sum |x w| + |b|), gamma =
    // (inputs + 2) 2^-24: one with threshold t beyond z by more than 2 gamma (|z| + sum
    // |coefficient x|) stays <= 0. Twice that, to spare.
    double z = 0.0, magnitude = 0.0;
    for (const auto& [c, coefficient] : group.direction()) {
      z += coefficient * row[c];
      magnitude += std::abs(coefficient * row[c]);
    }
    const double gamma = (static_cast<double>(group.direction().size()) + 2.0) * 0x1p-24;
    group.each_possibly_active(z, 4.0 * gamma * (magnitude + std::abs(z)) + 1e-30, mark);
  }
  s.pattern_lookups += each_sign_pattern_candidate(mlp, row, s.rest_input, mark);
}

// s.out[o] += the float32 sum over the candidate units of row `row`, in ascending order.
void add_candidates(const PreparedMlp& mlp, const float* row, MlpScratch& s) {
  const ScatterRows& unit_in = mlp.in_by_unit;
  const ScatterRows& out_w = mlp.out_by_unit;
  s.words.clear();
  find_candidates(mlp, row, s);
  std::sort(s.words.begin(), s.words.end());
  for (int w : s.words) {
    for (std::uint64_t bits = s.bits[w]; bits != 0; bits &= bits - 1) {
      const int u = 64 * w + std::countr_zero(bits);
      float pre = 0.0f;
      for (int e = unit_in.begin(u); e < unit_in.end(u); ++e)
        pre += row[unit_in.column[e]] * static_cast<float>(unit_in.value[e]);
      pre += static_cast<float>(mlp.in_bias[u]);
      if (!(pre > 0.0f)) continue;  // ReLU
      for (int e = out_w.begin(u); e < out_w.end(u); ++e)
        s.out[out_w.column[e]] += pre * static_cast<float>(out_w.value[e]);
    }
    s.bits[w] = 0;
  }
}

}  // namespace

void apply_mlp(const PreparedMlp& mlp, Activations<float>& x, int from, int n, MlpScratch& s) {
  const std::size_t words = (static_cast<std::size_t>(mlp.hidden) + 63) / 64;
  if (s.bits.size() < words) s.bits.resize(words, 0);
  s.out.assign(x.cols(), 0.0f);
  for (int i = from; i < n; ++i) {
    float* row = x.row(i).data();
    // A row of integers in an integer clamp-pair MLP: the same float32 sums, from its form.
    if (mlp.integer_clamps && mlp.integer_clamps->evaluate(mlp, row, s.out.data()))
      ++s.clamp_rows;
    else
      add_candidates(mlp, row, s);
    mlp.writes.for_each([&](int c) {
      row[c] += s.out[c] + static_cast<float>(mlp.out_bias[c]);
      s.out[c] = 0.0f;
    });
  }
}

void unembed(const ScatterRows& u, const Activations<float>& x, int from, int n,
             DoubleRows& logits) {
  std::vector<float> sum(u.cols);
  for (int t = from; t < n; ++t) {
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (int c = 0; c < u.rows; ++c) {
      const float xv = x(t, c);
      if (xv == 0.0f) continue;
      for (int e = u.begin(c); e < u.end(c); ++e)
        sum[u.column[e]] += xv * static_cast<float>(u.value[e]);
    }
    for (int s = 0; s < u.cols; ++s) logits(t, s) = sum[s];
  }
}

}  // namespace krc::kernels::f32
