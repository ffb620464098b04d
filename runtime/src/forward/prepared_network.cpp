#include "forward/prepared_network.hpp"

#include <algorithm>
#include <cmath>
#include <map>

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
}  // namespace

PreparedMlp prepare_mlp(const Mlp& m, double small_input, double low_threshold) {
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
