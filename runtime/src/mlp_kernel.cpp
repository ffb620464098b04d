// An MLP over a word, exploiting that compiled MLPs are huge but tiny in effect: each hidden
// unit reads 1-3 inputs and almost all are zero after ReLU. A unit can be nonzero only if a
// nonzero input touches it or its bias is positive; only those are evaluated, and only the
// active ones scatter their output column. Same result as the dense formula.
#include "krc/forward_kernels.hpp"

namespace krc::kernels {

template <typename Act>
void apply_mlp(const PreparedMlp& mlp, Activations<Act>& x, int n, MlpScratch& s) {
  const bool float32 = std::is_same_v<Act, float>;
  const int d = static_cast<int>(x.cols());
  s.acc.assign(mlp.hidden, 0.0);
  s.touched_mark.assign(mlp.hidden, 0);
  s.out.resize(d);
  const ScatterRows& in = mlp.in_by_input;
  const ScatterRows& out_w = mlp.out_by_unit;
  for (int i = 0; i < n; ++i) {
    Act* row = x.row(i).data();
    s.touched.clear();
    auto touch = [&](int u) {
      if (!s.touched_mark[u]) {
        s.touched_mark[u] = 1;
        s.touched.push_back(u);
      }
    };
    for (int c = 0; c < d; ++c) {
      const double xv = row[c];
      if (xv == 0.0) continue;
      for (int e = in.begin(c); e < in.end(c); ++e) {
        const int u = in.column[e];
        touch(u);
        s.acc[u] += in.value[e] * xv;
      }
    }
    for (int u : mlp.positive_bias_units) touch(u);

    for (int c = 0; c < d; ++c) s.out[c] = static_cast<double>(row[c]) + mlp.out_bias[c];
    for (int u : s.touched) {
      const double pre = s.acc[u] + mlp.in_bias[u];
      s.acc[u] = 0.0;
      s.touched_mark[u] = 0;
      if (!(pre > 0.0)) continue;  // ReLU
      const double h = stored(pre, float32);
      for (int e = out_w.begin(u); e < out_w.end(u); ++e) s.out[out_w.column[e]] += out_w.value[e] * h;
    }
    for (int c = 0; c < d; ++c) row[c] = static_cast<Act>(s.out[c]);
  }
}

template void apply_mlp<float>(const PreparedMlp&, Activations<float>&, int, MlpScratch&);
template void apply_mlp<double>(const PreparedMlp&, Activations<double>&, int, MlpScratch&);

}  // namespace krc::kernels
