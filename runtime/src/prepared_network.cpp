#include "krc/prepared_network.hpp"

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

PreparedNetwork::PreparedNetwork(const Network& n)
    : d_model(n.d_model()), scale(n.attention_scale) {
  for (const auto& layer : n.layers) {
    PreparedLayer p;
    for (const auto& h : layer.heads) {
      PreparedHead ph;
      ph.kind = h.kind;
      ph.query_dim = static_cast<int>(h.query.cols());
      ph.value_dim = static_cast<int>(h.value.cols());
      ph.query = ScatterRows::rows_of(h.query);
      ph.key = ScatterRows::rows_of(h.key);
      ph.value = ScatterRows::rows_of(h.value);
      ph.output = ScatterRows::rows_of(h.output);
      p.heads.push_back(std::move(ph));
    }
    if (layer.mlp) {
      const Mlp& m = *layer.mlp;
      PreparedMlp pm;
      pm.hidden = m.hidden();
      pm.in_by_input = ScatterRows::columns_of(m.in_weight);
      pm.out_by_unit = ScatterRows::columns_of(m.out_weight);
      pm.in_bias.assign(m.in_bias.data(), m.in_bias.data() + m.in_bias.size());
      pm.out_bias.assign(m.out_bias.data(), m.out_bias.data() + m.out_bias.size());
      for (int u = 0; u < pm.hidden; ++u)
        if (m.in_bias[u] > 0.0f) pm.positive_bias_units.push_back(u);
      p.mlp = std::move(pm);
    }
    layers.push_back(std::move(p));
  }
  unembedding = ScatterRows::rows_of(n.unembedding);
}

}  // namespace krc
