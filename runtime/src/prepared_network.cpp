#include "krc/prepared_network.hpp"

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
  visit([&](int r, int, double) { ++s.start[r + 1]; });
  for (int r = 0; r < rows; ++r) s.start[r + 1] += s.start[r];
  s.column.resize(s.start[rows]);
  s.value.resize(s.start[rows]);
  std::vector<int> next(s.start.begin(), s.start.end() - 1);
  visit([&](int r, int c, double v) {
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
    if (!set.runs.empty() && set.runs.back().second == c) ++set.runs.back().second;
    else set.runs.emplace_back(c, c + 1);
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
  std::vector<char> low(pm.hidden, 0);
  for (int u = 0; u < pm.hidden; ++u) {
    double largest = 0.0;
    for (int e = pm.in_by_unit.begin(u); e < pm.in_by_unit.end(u); ++e)
      largest = std::max(largest, std::abs(pm.in_by_unit.value[e]));
    pm.largest_in_weight.push_back(largest);
    if (pm.in_bias[u] > 0.0) {
      pm.positive_bias_units.push_back(u);
    } else if (largest > 0.0) {
      const double threshold = -pm.in_bias[u] / largest;
      pm.units_by_threshold.emplace_back(threshold, u);
      low[u] = threshold < low_threshold;
    }
  }
  std::sort(pm.units_by_threshold.begin(), pm.units_by_threshold.end());

  // Runs: single-input units with bias <= 0, grouped by (input, weight).
  std::map<std::pair<int, double>, std::vector<std::pair<double, int>>> groups;
  for (int u = 0; u < pm.hidden; ++u)
    if (pm.in_by_unit.end(u) - pm.in_by_unit.begin(u) == 1 && pm.in_bias[u] <= 0.0) {
      const int e = pm.in_by_unit.begin(u);
      groups[{pm.in_by_unit.column[e], pm.in_by_unit.value[e]}].emplace_back(pm.in_bias[u], u);
    }
  std::vector<char> in_run(pm.hidden, 0);
  for (auto& [key, members] : groups) {
    if (members.size() < PreparedMlp::kMinRun) continue;
    std::sort(members.begin(), members.end());
    UnitRun run;
    run.input = key.first;
    run.weight = key.second;
    for (const auto& [bias, u] : members) {
      run.bias.push_back(bias);
      run.unit.push_back(u);
      in_run[u] = 1;
    }
    pm.runs.push_back(std::move(run));  // std::map order: by input
  }
  pm.runs_start.assign(d_model + 1, 0);
  for (const auto& run : pm.runs) ++pm.runs_start[run.input + 1];
  for (int c = 0; c < d_model; ++c) pm.runs_start[c + 1] += pm.runs_start[c];
  pm.in_by_input = compress(d_model, pm.hidden, [&](auto emit) {
    for_each_nonzero(m.in_weight, [&](int u, int c, float w) {
      if (!in_run[u]) emit(c, u, w);
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
    reads[c] = pm.in_by_input.begin(c) < pm.in_by_input.end(c) || pm.runs_start[c] < pm.runs_start[c + 1];
    writes[c] = writes[c] || pm.out_bias[c] != 0.0;
  }
  pm.reads = DimSet::of(reads);
  pm.writes = DimSet::of(writes);
  return pm;
}

PreparedNetwork::PreparedNetwork(const Network& n) : d_model(n.d_model()), scale(n.attention_scale) {
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
