#include "forward/integer_clamp_mlp.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "forward/prepared_network.hpp"

namespace krc {

namespace {

constexpr double kExactIntegers = 16777216.0;  // 2^24: float32 holds every integer up to it

bool integral_value(double v) { return std::isfinite(v) && v == std::nearbyint(v); }

template <typename T>
bool all_integral(const std::vector<T>& values) {
  return std::all_of(values.begin(), values.end(), [](T v) { return integral_value(v); });
}

// Unit u's input weights as (dim, weight) in ascending dims.
bool same_inputs(const ScatterRows& in, int u, int v) {
  return std::equal(in.column.begin() + in.begin(u), in.column.begin() + in.end(u),
                    in.column.begin() + in.begin(v), in.column.begin() + in.end(v)) &&
         std::equal(in.value.begin() + in.begin(u), in.value.begin() + in.end(u),
                    in.value.begin() + in.begin(v), in.value.begin() + in.end(v));
}

double weight_sum(const ScatterRows& in, int u) {  // A_u
  double a = 0.0;
  for (int e = in.begin(u); e < in.end(u); ++e) a += std::abs(in.value[e]);
  return a;
}

}  // namespace

// The units of each output, paired, and the bounds of the header's proof.
struct IntegerClampMlp::Builder {
  const PreparedMlp& mlp;
  std::vector<int> output_of;  // per dim: index into result.outputs_, or -1
  IntegerClampMlp result;
  double alpha = 0, beta = 0;  // of the output being finished

  int output(int dim) {
    if (output_of[dim] < 0) {
      output_of[dim] = static_cast<int>(result.outputs_.size());
      result.outputs_.push_back({});
      result.outputs_.back().dim = dim;
    }
    return output_of[dim];
  }

  // Whether u and u + 1 form a clamp pair: one output, weights w and -w, same inputs.
  bool pair_at(int u) const {
    const ScatterRows& out = mlp.out_by_unit;
    if (u + 1 >= mlp.hidden || out.end(u) - out.begin(u) != 1) return false;
    if (out.end(u + 1) - out.begin(u + 1) != 1) return false;
    const int e = out.begin(u), f = out.begin(u + 1);
    return out.column[e] == out.column[f] && out.value[e] == -out.value[f] &&
           mlp.in_bias[u] != mlp.in_bias[u + 1] && same_inputs(mlp.in_by_unit, u, u + 1);
  }

  // Sorts units into pairs and singles per output; false when a unit writes several outputs.
  bool classify() {
    const ScatterRows& out = mlp.out_by_unit;
    for (int u = 0; u < mlp.hidden; ++u) {
      const int outputs = out.end(u) - out.begin(u);
      if (outputs > 1) return false;
      if (outputs == 0) continue;  // adds nothing anywhere
      Output& o = result.outputs_[output(out.column[out.begin(u)])];
      if (pair_at(u)) {
        const double low = std::min(mlp.in_bias[u], mlp.in_bias[u + 1]);
        o.low_bias.push_back(static_cast<float>(low));
        o.pair.push_back(u++);
      } else {
        o.singles.push_back(u);
      }
    }
    return true;
  }

  // The input every pair of o reads with one weight, if any (the first such).
  void find_pivot(Output& o) const {
    if (o.pair.empty()) return;
    const ScatterRows& in = mlp.in_by_unit;
    for (int e = in.begin(o.pair[0]); e < in.end(o.pair[0]); ++e) {
      const int c = in.column[e];
      const double w = in.value[e];
      const bool shared = std::all_of(o.pair.begin(), o.pair.end(), [&](int u) {
        for (int f = in.begin(u); f < in.end(u); ++f)
          if (in.column[f] == c) return in.value[f] == w;
        return false;
      });
      if (shared) {
        o.pivot = c;
        o.pivot_weight = w;
        return;
      }
    }
  }

  // Sorts o's pairs by low bias, sums the saturated ones from each on, and gives o's alpha
  // and beta (the header's bound on its partial sums: alpha M + beta).
  void finish(Output& o) {
    const ScatterRows& in = mlp.in_by_unit;
    const ScatterRows& out = mlp.out_by_unit;
    std::vector<int> order(o.pair.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return o.low_bias[a] < o.low_bias[b]; });
    std::vector<float> low;
    std::vector<int> pair;
    o.saturated_from.assign(order.size() + 1, 0.0);
    alpha = beta = 0.0;
    double cut = 0.0, cut_slope = 0.0;  // the largest pair unit, |w| (A M + |b|): M's factor
    for (int k : order) {
      const int u = o.pair[k];
      const double w = std::abs(out.value[out.begin(u)]);
      const double gap = std::abs(mlp.in_bias[u] - mlp.in_bias[u + 1]);
      const double a = weight_sum(in, u);
      o.widest_gap = std::max(o.widest_gap, gap);
      beta += w * gap;
      cut = std::max(cut, w * std::max(std::abs(mlp.in_bias[u]), std::abs(mlp.in_bias[u + 1])));
      cut_slope = std::max(cut_slope, w * a);
      const double rest = a - (o.pivot < 0 ? 0.0 : std::abs(o.pivot_weight));
      o.spread = std::max(o.spread, rest);
      low.push_back(o.low_bias[k]);
      pair.push_back(u);
    }
    for (std::size_t k = order.size(); k-- > 0;) {
      const int u = pair[k];
      const double gap = std::abs(mlp.in_bias[u] - mlp.in_bias[u + 1]);
      const int hi = mlp.in_bias[u] > mlp.in_bias[u + 1] ? u : u + 1;
      o.saturated_from[k] =
          static_cast<float>(o.saturated_from[k + 1] + out.value[out.begin(hi)] * gap);
    }
    o.low_bias = std::move(low);
    o.pair = std::move(pair);
    for (int u : o.pair) {
      const int hi = mlp.in_bias[u] > mlp.in_bias[u + 1] ? u : u + 1;
      o.lanes.push_back(IntegerClampMlp::lane(mlp, o, u, hi));
    }
    for (int u : o.singles) o.single_lanes.push_back(IntegerClampMlp::lane(mlp, o, u, u));
    if (o.low_bias.size() >= 2) {  // an arithmetic progression (the compose step's K s - 3K/4)
      o.step = double{o.low_bias[1]} - o.low_bias[0];
      for (std::size_t k = 0; k < o.low_bias.size() && o.step > 0; ++k)
        if (double{o.low_bias[k]} != o.low_bias[0] + static_cast<double>(k) * o.step) o.step = 0;
    }
    alpha = cut_slope;
    beta += cut;
    for (int u : o.singles) {
      const double w = std::abs(out.value[out.begin(u)]);
      alpha += w * weight_sum(in, u);
      beta += w * std::abs(mlp.in_bias[u]);
    }
  }

  // Whether a row costs O(outputs log pairs) here: few singles, and a pivot wherever pairs are
  // many (else the window is every pair, and the general kernel's candidates may be fewer).
  bool worth_it() const {
    std::size_t singles = 0;
    for (const Output& o : result.outputs_) {
      singles += o.singles.size();
      if (o.pair.size() >= 4 && o.pivot < 0) return false;
    }
    return singles <= 2 * result.outputs_.size();
  }

  // The largest M with alpha M + beta <= 2^24 (0 when none), checked after the division.
  static double largest_m(double alpha, double beta) {
    if (beta > kExactIntegers) return 0.0;
    if (alpha == 0.0) return kExactIntegers;
    double m = std::floor((kExactIntegers - beta) / alpha);
    while (m > 0 && alpha * m + beta > kExactIntegers) --m;
    return std::min(m, kExactIntegers);
  }
};

std::optional<IntegerClampMlp> IntegerClampMlp::of(const PreparedMlp& mlp) {
  const ScatterRows& in = mlp.in_by_unit;
  if (!all_integral(in.value) || !all_integral(mlp.in_bias) || !all_integral(mlp.out_by_unit.value))
    return std::nullopt;
  Builder b{mlp, std::vector<int>(mlp.out_by_unit.cols, -1), {}};
  if (!b.classify()) return std::nullopt;
  double m = kExactIntegers;
  for (Output& o : b.result.outputs_) {
    b.find_pivot(o);
    b.finish(o);
    m = std::min(m, Builder::largest_m(b.alpha, b.beta));
  }
  std::vector<char> read(in.cols, 0);
  for (int u = 0; u < mlp.hidden; ++u) {
    m = std::min(m, Builder::largest_m(weight_sum(in, u), std::abs(mlp.in_bias[u])));
    for (int e = in.begin(u); e < in.end(u); ++e) read[in.column[e]] = 1;
  }
  if (m < 1.0 || !b.worth_it()) return std::nullopt;
  for (int c = 0; c < in.cols; ++c)
    if (read[c]) b.result.reads_.push_back(c);
  b.result.largest_input_ = m;
  return std::move(b.result);
}

double IntegerClampMlp::row_work() const {
  double work = 2.0 * static_cast<double>(reads_.size());
  for (const Output& o : outputs_)
    work += 2.0 * std::log2(static_cast<double>(o.pair.size()) + 2.0) + 12.0 +
            3.0 * static_cast<double>(o.singles.size());
  return work;
}

// The lane of unit `unit`, whose inputs u's are (u: the pair's first unit, or the single).
IntegerClampMlp::Lane IntegerClampMlp::lane(const PreparedMlp& mlp, const Output& o, int u,
                                            int unit) {
  const ScatterRows& in = mlp.in_by_unit;
  Lane lane;
  lane.high_bias = static_cast<float>(mlp.in_bias[unit]);
  lane.high_weight = static_cast<float>(mlp.out_by_unit.value[mlp.out_by_unit.begin(unit)]);
  int others = 0;
  bool pivot = o.pivot < 0;  // without a pivot, p = 0 and z is the rest
  for (int e = in.begin(u); e < in.end(u); ++e) {
    if (in.column[e] == o.pivot) {
      pivot = in.value[e] == o.pivot_weight;
      continue;
    }
    ++others;
    lane.other = in.column[e];
    lane.other_weight = static_cast<float>(in.value[e]);
  }
  lane.other = !pivot || others > 1 ? -2 : others == 0 ? -1 : lane.other;
  return lane;
}

namespace {
// The exact value of unit u's term, w ReLU(W1[u] . row + b): integers, exact in float64.
double term(const PreparedMlp& mlp, int u, const float* row) {
  const ScatterRows& in = mlp.in_by_unit;
  double z = mlp.in_bias[u];
  for (int e = in.begin(u); e < in.end(u); ++e) z += in.value[e] * row[in.column[e]];
  return z > 0.0 ? mlp.out_by_unit.value[mlp.out_by_unit.begin(u)] * z : 0.0;
}
}  // namespace

std::ptrdiff_t IntegerClampMlp::at_most(const Output& o, double v, std::ptrdiff_t from) {
  const auto n = static_cast<std::ptrdiff_t>(o.low_bias.size());
  if (o.step <= 0)
    return std::upper_bound(o.low_bias.begin() + from, o.low_bias.end(), v) - o.low_bias.begin();
  // The progression's guess, then corrected against the stored values (rounding of the
  // division can only put it one off), so the result is upper_bound's.
  const double guess = std::floor((v - o.low_bias[0]) / o.step) + 1.0;
  auto k = static_cast<std::ptrdiff_t>(std::clamp(guess, static_cast<double>(from), double(n)));
  while (k > from && o.low_bias[k - 1] > v) --k;
  while (k < n && o.low_bias[k] <= v) ++k;
  return k;
}

double IntegerClampMlp::sum(const PreparedMlp& mlp, const Output& o, const float* row,
                            double m) const {
  const double p = o.pivot < 0 ? 0.0 : o.pivot_weight * row[o.pivot];
  const double spread = o.spread * m;
  // Pairs with b_lo <= -p - spread - gap are 0; those with b_lo > spread - p saturated.
  const auto zero_end = at_most(o, -p - spread - o.widest_gap, 0);
  const auto saturated = at_most(o, spread - p, zero_end);
  double s = o.saturated_from[saturated];
  for (auto k = zero_end; k < saturated; ++k) {
    const Lane& lane = o.lanes[k];
    if (lane.other == -2) {
      s += term(mlp, o.pair[k], row) + term(mlp, o.pair[k] + 1, row);
      continue;
    }
    // The same integers as the units' own weights give: z + b_hi and z + b_lo, exact.
    const double z = p + (lane.other < 0 ? 0.0 : double{lane.other_weight} * row[lane.other]);
    s += lane.high_weight *
         (std::max(z + lane.high_bias, 0.0) - std::max(z + double{o.low_bias[k]}, 0.0));
  }
  for (std::size_t k = 0; k < o.singles.size(); ++k) {
    const Lane& lane = o.single_lanes[k];
    if (lane.other == -2) {
      s += term(mlp, o.singles[k], row);
      continue;
    }
    const double z = p + (lane.other < 0 ? 0.0 : double{lane.other_weight} * row[lane.other]);
    s += lane.high_weight * std::max(z + lane.high_bias, 0.0);
  }
  return s;
}

bool IntegerClampMlp::evaluate(const PreparedMlp& mlp, const float* row, float* out) const {
  float m = 0.0f;
  for (int c : reads_) {
    const float x = std::abs(row[c]);
    if (!(x <= largest_input_) || x != std::nearbyint(x)) return false;
    m = std::max(m, x);
  }
  // + 0.0f: a float64 sum that cancels to -0 is the +0 float32 gives (see the header).
  for (const Output& o : outputs_) out[o.dim] = static_cast<float>(sum(mlp, o, row, m)) + 0.0f;
  return true;
}

}  // namespace krc

namespace krc {

std::uint64_t IntegerClampMlp::bytes() const {
  std::uint64_t total = held_bytes(outputs_) + held_bytes(reads_);
  for (const Output& o : outputs_)
    total += held_bytes(o.low_bias) + held_bytes(o.pair) + held_bytes(o.saturated_from) +
             held_bytes(o.lanes) + held_bytes(o.singles) + held_bytes(o.single_lanes);
  return total;
}

}  // namespace krc
