#include "forward/prepared_network.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

namespace krc {

namespace {
// Compressed rows of an [outer x inner] relation given as (outer, inner, value) visits.
template <typename Visit>
ScatterRows compress(int rows, int cols, Visit visit) {
  ScatterRows s;
  s.rows = rows;
  s.cols = cols;
  s.start.assign(rows + 1, 0);
  visit([&](int r, int, float) { ++s.start[r + 1]; });
  for (int r = 0; r < rows; ++r) s.start[r + 1] += s.start[r];
  s.column.resize(s.start[rows]);
  s.value.resize(s.start[rows]);
  std::vector<int> next(s.start.begin(), s.start.end() - 1);
  visit([&](int r, int c, float v) {
    s.column[next[r]] = c;
    s.value[next[r]++] = v;
  });
  return s;
}

template <typename F>
void for_each_nonzero(const SparseMatrix& m, F f) {
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      if (it.value() != 0.0f) f(static_cast<int>(it.row()), static_cast<int>(it.col()), it.value());
}
}  // namespace

DimSet DimSet::of(const std::vector<char>& member) {
  DimSet set;
  for (int c = 0; c < static_cast<int>(member.size()); ++c) {
    if (!member[c]) continue;
    if (!set.runs.empty() && set.runs.back().second == c)
      ++set.runs.back().second;
    else
      set.runs.emplace_back(c, c + 1);
  }
  return set;
}

ScatterRows ScatterRows::rows_of(const SparseMatrix& m) {
  return compress(static_cast<int>(m.rows()), static_cast<int>(m.cols()), [&](auto emit) {
    for_each_nonzero(m, [&](int r, int c, float v) { emit(r, c, v); });
  });
}

ScatterRows ScatterRows::columns_of(const SparseMatrix& m) {
  return compress(static_cast<int>(m.cols()), static_cast<int>(m.rows()), [&](auto emit) {
    for_each_nonzero(m, [&](int r, int c, float v) { emit(c, r, v); });
  });
}

PreparedHead prepare_head(const AttentionHead& h) {
  PreparedHead ph;
  ph.kind = h.kind;
  ph.query_dim = static_cast<int>(h.query.cols());
  ph.value_dim = static_cast<int>(h.value.cols());
  ph.query = ScatterRows::rows_of(h.query);
  ph.key = ScatterRows::rows_of(h.key);
  ph.value = ScatterRows::rows_of(h.value);
  ph.output = ScatterRows::rows_of(h.output);
  std::vector<char> reads(ph.query.rows, 0);
  for (int c = 0; c < ph.query.rows; ++c)
    reads[c] = ph.query.begin(c) < ph.query.end(c) || ph.key.begin(c) < ph.key.end(c) ||
               ph.value.begin(c) < ph.value.end(c);
  ph.reads = DimSet::of(reads);
  return ph;
}

namespace {
// Groups of at least PreparedMlp::kMinShared units whose input weights are one direction
// times a factor of their own: the direction is the row divided by its first weight (for a
// single input, that input with coefficient 1). Marks their units in `shared`.
std::vector<SharedInputUnits> shared_input_groups(const PreparedMlp& pm,
                                                  std::vector<char>& shared) {
  using Direction = std::vector<std::pair<int, double>>;
  std::map<Direction, std::vector<SharedInputUnits::Unit>> groups;
  const ScatterRows& in = pm.in_by_unit;
  for (int u = 0; u < pm.hidden; ++u) {
    if (in.begin(u) == in.end(u)) continue;  // a constant: ReLU(bias)
    const double factor = in.value[in.begin(u)];
    Direction direction;
    for (int e = in.begin(u); e < in.end(u); ++e)
      direction.emplace_back(in.column[e], in.value[e] / factor);
    groups[direction].push_back({u, factor, pm.in_bias[u]});
  }
  std::vector<SharedInputUnits> result;
  for (auto& [direction, units] : groups) {
    if (units.size() < PreparedMlp::kMinShared) continue;
    for (const auto& unit : units) shared[unit.unit] = 1;
    result.emplace_back(direction, units, pm.out_by_unit);
  }
  return result;
}

// The pattern inputs P of unit u: the longest run of consecutive inputs (the first of equal
// ones) among those of the weight magnitude it has most often (of two as frequent, the larger),
// when it holds 2 to 64 inputs; with that magnitude; empty otherwise. A compose unit in digit
// coordinates has ten bits at +-32 beside its digit (1) and the constant feature that carries
// its bias (-320); in binary coordinates, seven bits at +-1 and a fetched bit at 1 elsewhere
// in the residual. Either way P is the register's bits, which the layouts keep consecutive;
// the other inputs are bounded as the rest (any choice of P is exact, this one is fast).
// Sorting the magnitudes keeps a unit of k inputs at O(k log k): a hostile file's unit may read
// every residual dim.
std::vector<int> pattern_inputs(const ScatterRows& in, int u, float& magnitude) {
  magnitude = 0.0f;
  std::vector<int> dims;
  if (in.end(u) - in.begin(u) < 2) return dims;
  static thread_local std::vector<float> sorted;
  sorted.clear();
  for (int e = in.begin(u); e < in.end(u); ++e)
    if (!std::isnan(in.value[e])) sorted.push_back(std::abs(in.value[e]));  // sort needs an order
  std::sort(sorted.begin(), sorted.end());
  int best = 0;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    if (static_cast<int>(j - i) >= best) {  // ascending: of equal counts, the larger
      best = static_cast<int>(j - i);
      magnitude = sorted[i];
    }
    i = j;
  }
  if (best < 2) return dims;
  int run_begin = -1, run_length = 0, best_begin = -1, best_length = 0, last = -2;
  for (int e = in.begin(u); e < in.end(u); ++e) {
    if (std::abs(in.value[e]) != magnitude) continue;
    const int c = in.column[e];
    if (c == last + 1) {
      ++run_length;
    } else {
      run_begin = c;
      run_length = 1;
    }
    if (run_length > best_length) {
      best_begin = run_begin;
      best_length = run_length;
    }
    last = c;
  }
  if (best_length < 2 || best_length > 64) return dims;
  for (int k = 0; k < best_length; ++k) dims.push_back(best_begin + k);
  return dims;
}

DimSet runs_of(const std::vector<int>& ascending) {
  DimSet set;
  for (int c : ascending) {
    if (!set.runs.empty() && set.runs.back().second == c)
      ++set.runs.back().second;
    else
      set.runs.emplace_back(c, c + 1);
  }
  return set;
}

// One group: the units of `candidates` whose pattern inputs are P (those of the first) with
// the same magnitude, with their sign patterns and the bounds sign_pattern_units.hpp uses:
// the inputs every unit reads with one weight (the constant feature of a bias) are summed
// exactly; the others' set goes into pm.rest_sets (shared with an equal one already there).
std::optional<SignPatternUnits> sign_pattern_group(
    PreparedMlp& pm, const std::vector<int>& candidates, std::size_t min_size,
    std::map<std::vector<std::pair<int, int>>, int>& rest_index) {
  const ScatterRows& in = pm.in_by_unit;
  float magnitude = 0.0f;
  const std::vector<int> dims = pattern_inputs(in, candidates.front(), magnitude);
  std::vector<int> members;
  for (int u : candidates) {
    float m = 0.0f;
    if (pattern_inputs(in, u, m) == dims && m == magnitude) members.push_back(u);
  }
  if (members.size() < min_size) return std::nullopt;
  auto in_pattern = [&](int c) { return std::binary_search(dims.begin(), dims.end(), c); };
  // The common inputs: the first member's other inputs that every member reads alike.
  std::vector<std::pair<int, float>> common;
  for (int e = in.begin(members[0]); e < in.end(members[0]); ++e)
    if (!in_pattern(in.column[e])) common.emplace_back(in.column[e], in.value[e]);
  for (int u : members) {
    std::erase_if(common, [&](const std::pair<int, float>& cw) {
      for (int e = in.begin(u); e < in.end(u); ++e)
        if (in.column[e] == cw.first) return in.value[e] != cw.second;
      return true;
    });
  }
  auto is_common = [&](int c) {
    return std::any_of(common.begin(), common.end(), [&](const auto& cw) { return cw.first == c; });
  };
  std::vector<SignPatternUnits::Unit> units;
  SignPatternUnits::Bounds b;
  b.magnitude = magnitude;
  b.largest_bias = -std::numeric_limits<double>::infinity();
  std::vector<int> rest;
  for (int u : members) {
    std::uint64_t pattern = 0;
    double rest_weight = 0.0;
    for (int e = in.begin(u); e < in.end(u); ++e) {
      const int c = in.column[e];
      if (in_pattern(c)) {
        const auto k = std::lower_bound(dims.begin(), dims.end(), c) - dims.begin();
        if (in.value[e] > 0.0f) pattern |= std::uint64_t{1} << k;
      } else if (!is_common(c)) {
        rest_weight += std::abs(in.value[e]);
        rest.push_back(c);
      }
    }
    units.push_back({pattern, u});
    b.rest_weight = std::max(b.rest_weight, rest_weight);
    b.largest_bias = std::max(b.largest_bias, pm.in_bias[u]);
    b.largest_abs_bias = std::max(b.largest_abs_bias, std::abs(pm.in_bias[u]));
    b.inputs = std::max(b.inputs, in.end(u) - in.begin(u));
  }
  if (b.rest_weight > 0.0) {
    std::sort(rest.begin(), rest.end());
    rest.erase(std::unique(rest.begin(), rest.end()), rest.end());
    DimSet set = runs_of(rest);
    auto [it, added] = rest_index.emplace(set.runs, static_cast<int>(pm.rest_sets.size()));
    if (added) pm.rest_sets.push_back(std::move(set));
    b.rest_set = it->second;
  }
  return SignPatternUnits(dims, std::move(common), std::move(units), b);
}

// Groups of at least min_size units outside `apart` that share their pattern inputs and
// magnitude (sign_pattern_units.hpp); marks their units in `apart`. Units are bucketed by a
// hash of (P, magnitude), 16 bytes a unit while grouping; a bucket's units whose P differs
// from its first unit's (a collision) go the ordinary way.
std::vector<SignPatternUnits> sign_pattern_groups(PreparedMlp& pm, std::vector<char>& apart,
                                                  std::size_t min_size) {
  std::vector<SignPatternUnits> result;
  if (min_size == std::numeric_limits<std::size_t>::max()) return result;
  std::vector<std::pair<std::uint64_t, int>> keyed;
  for (int u = 0; u < pm.hidden; ++u) {
    if (apart[u]) continue;
    float magnitude = 0.0f;
    const std::vector<int> dims = pattern_inputs(pm.in_by_unit, u, magnitude);
    if (dims.empty()) continue;
    std::uint64_t h = std::bit_cast<std::uint32_t>(magnitude) * 0x9E3779B97F4A7C15ull;
    for (int c : dims) h = (h ^ static_cast<std::uint64_t>(c)) * 0x100000001B3ull;
    keyed.emplace_back(h, u);
  }
  std::sort(keyed.begin(), keyed.end());
  std::map<std::vector<std::pair<int, int>>, int> rest_index;
  std::vector<int> bucket;
  for (std::size_t i = 0; i < keyed.size();) {
    std::size_t j = i;
    bucket.clear();
    for (; j < keyed.size() && keyed[j].first == keyed[i].first; ++j)
      bucket.push_back(keyed[j].second);
    i = j;
    if (bucket.size() < min_size) continue;
    if (auto group = sign_pattern_group(pm, bucket, min_size, rest_index)) {
      for (const SignPatternUnits::Unit& unit : group->units()) apart[unit.unit] = 1;
      result.push_back(std::move(*group));
    }
  }
  return result;
}
}  // namespace

PreparedMlp prepare_mlp(const Mlp& m, double small_input, double low_threshold,
                        std::size_t min_sign_pattern) {
  const int d_model = static_cast<int>(m.in_weight.cols());
  PreparedMlp pm;
  pm.hidden = m.hidden();
  pm.small_input = small_input;
  pm.low_threshold = low_threshold;
  pm.in_by_unit = ScatterRows::rows_of(m.in_weight);
  pm.out_by_unit = ScatterRows::columns_of(m.out_weight);
  pm.in_bias.assign(m.in_bias.data(), m.in_bias.data() + m.in_bias.size());
  pm.out_bias.assign(m.out_bias.data(), m.out_bias.data() + m.out_bias.size());
  std::vector<char> shared(pm.hidden, 0);
  pm.shared_input = shared_input_groups(pm, shared);
  pm.sign_patterns = sign_pattern_groups(pm, shared, min_sign_pattern);

  std::vector<char> low(pm.hidden, 0);
  for (int u = 0; u < pm.hidden; ++u) {
    double largest = 0.0;
    for (int e = pm.in_by_unit.begin(u); e < pm.in_by_unit.end(u); ++e)
      largest = std::max(largest, static_cast<double>(std::abs(pm.in_by_unit.value[e])));
    pm.largest_in_weight.push_back(largest);
    if (shared[u]) continue;
    if (pm.in_bias[u] > 0.0) {
      pm.positive_bias_units.push_back(u);
    } else if (largest > 0.0) {
      const double threshold = -pm.in_bias[u] / largest;
      pm.units_by_threshold.emplace_back(threshold, u);
      low[u] = threshold < low_threshold;
    }
  }
  std::sort(pm.units_by_threshold.begin(), pm.units_by_threshold.end());

  pm.in_by_input = compress(d_model, pm.hidden, [&](auto emit) {
    for_each_nonzero(m.in_weight, [&](int u, int c, float w) {
      if (!shared[u]) emit(c, u, w);
    });
  });
  pm.low_threshold_by_input = compress(d_model, pm.hidden, [&](auto emit) {
    for_each_nonzero(m.in_weight, [&](int u, int c, float w) {
      if (low[u]) emit(c, u, w);
    });
  });
  std::vector<char> reads(d_model, 0), writes(d_model, 0);
  for (int c : pm.out_by_unit.column) writes[c] = 1;
  for (int c = 0; c < d_model; ++c) {
    reads[c] = pm.in_by_input.begin(c) < pm.in_by_input.end(c);
    writes[c] = writes[c] || pm.out_bias[c] != 0.0;
  }
  pm.reads = DimSet::of(reads);
  pm.writes = DimSet::of(writes);
  pm.integer_clamps = IntegerClampMlp::of(pm);
  return pm;
}

PreparedNetwork::PreparedNetwork(const Network& n)
    : d_model(n.d_model()), scale(n.attention_scale) {
  for (const auto& layer : n.layers) {
    PreparedLayer p;
    for (const auto& h : layer.heads) p.heads.push_back(prepare_head(h));
    std::vector<char> written(d_model, 0);
    for (const auto& ph : p.heads)
      for (int c : ph.output.column) written[c] = 1;
    p.attention_writes = DimSet::of(written);
    if (layer.mlp) p.mlp = prepare_mlp(*layer.mlp);
    layers.push_back(std::move(p));
  }
  unembedding = ScatterRows::rows_of(n.unembedding);
}

}  // namespace krc

namespace krc {

std::uint64_t ScatterRows::bytes() const {
  return held_bytes(start) + held_bytes(column) + held_bytes(value);
}

std::uint64_t PreparedMlp::bytes() const {
  std::uint64_t total = 0;
  for (const ScatterRows* rows : {&in_by_input, &in_by_unit, &out_by_unit, &low_threshold_by_input})
    total += rows->bytes();
  total += held_bytes(in_bias) + held_bytes(out_bias) + held_bytes(largest_in_weight) +
           held_bytes(positive_bias_units) + held_bytes(units_by_threshold) + reads.bytes() +
           writes.bytes() + held_bytes(shared_input) + held_bytes(sign_patterns) +
           held_bytes(rest_sets);
  for (const SharedInputUnits& group : shared_input) total += group.bytes();
  for (const SignPatternUnits& group : sign_patterns) total += group.bytes();
  for (const DimSet& set : rest_sets) total += set.bytes();
  if (integer_clamps) total += integer_clamps->bytes();
  return total;
}

std::uint64_t PreparedNetwork::bytes() const {
  std::uint64_t total = held_bytes(layers) + unembedding.bytes();
  for (const PreparedLayer& layer : layers) {
    total += held_bytes(layer.heads) + layer.attention_writes.bytes();
    for (const PreparedHead& h : layer.heads)
      total +=
          h.query.bytes() + h.key.bytes() + h.value.bytes() + h.output.bytes() + h.reads.bytes();
    if (layer.mlp) total += layer.mlp->bytes();
  }
  return total;
}

}  // namespace krc
