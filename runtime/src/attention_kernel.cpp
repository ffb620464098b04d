// One attention head over a word: projections by scattering sparse weight rows, scores by
// blocks of query rows against the causal keys (a GEMM in double), softmax terms below the
// threshold skipped before exp, value sums over the few nonzeros of each value row.
#include <algorithm>
#include <cmath>

#include "krc/forward_kernels.hpp"

namespace krc::kernels {

namespace {

constexpr int kQueryBlock = 64;

// out[i] = x[i] W, each row rounded once; dense [n, width].
void project(const SparseRows& x, const ScatterRows& w, int width, bool float32, DoubleRows& out) {
  const int n = x.rows();
  out.setZero(n, width);
  for (int i = 0; i < n; ++i) {
    double* row = out.row(i).data();
    for (int k = x.start[i]; k < x.start[i + 1]; ++k) {
      const double xv = x.value[k];
      const int c = x.index[k];
      for (int e = w.begin(c); e < w.end(c); ++e) row[w.column[e]] += xv * w.value[e];
    }
    if (float32)
      for (int j = 0; j < width; ++j) row[j] = stored(row[j], true);
  }
}

// Softmax terms whose weight is an exact zero in the stored precision need no exp.
double skip_threshold(Precision precision) { return precision == Precision::Float32 ? -104.0 : -746.0; }

}  // namespace

void add_attention_head(const PreparedHead& head, const SparseRows& x, double scale,
                        const ForwardOptions& options, AttentionScratch& s, DoubleRows& update) {
  const int n = x.rows();
  const bool float32 = options.precision == Precision::Float32;
  const bool argmax = options.attention == AttentionKind::Hard && head.kind == HeadKind::Select;
  const double threshold = skip_threshold(options.precision);
  const int vd = head.value_dim;

  project(x, head.query, head.query_dim, float32, s.q);
  project(x, head.key, head.query_dim, float32, s.k);
  project(x, head.value, vd, float32, s.dense);
  s.v.clear();
  for (int j = 0; j < n; ++j) s.v.push_row(s.dense.row(j).data(), vd);

  s.scores.resize(kQueryBlock, n);
  s.acc.assign(vd, 0.0);
  s.diff.resize(n);
  s.kept.resize(n);
  for (int r0 = 0; r0 < n; r0 += kQueryBlock) {
    const int r1 = std::min(n, r0 + kQueryBlock), rows = r1 - r0;
    auto block = s.scores.topLeftCorner(rows, r1);
    if (head.query_dim == 0) block.setZero();
    else block.noalias() = scale * (s.q.middleRows(r0, rows) * s.k.topRows(r1).transpose());

    for (int i = r0; i < r1; ++i) {
      const double* score = s.scores.row(i - r0).data();
      const int keys = i + 1;  // causal: positions 0..i
      double* acc = s.acc.data();
      if (argmax) {
        int best = 0;
        for (int j = 1; j < keys; ++j)
          if (score[j] >= score[best]) best = j;  // ties go to the latest position
        for (int k = s.v.start[best]; k < s.v.start[best + 1]; ++k) acc[s.v.index[k]] = s.v.value[k];
      } else {
        const double max = Eigen::Map<const Eigen::ArrayXd>(score, keys).maxCoeff();
        const double cutoff = max + threshold;
        int kept = 0;
        for (int j = 0; j < keys; ++j)
          if (score[j] >= cutoff) {
            s.kept[kept] = j;
            s.diff[kept++] = score[j] - max;
          }
        auto weights = Eigen::Map<Eigen::ArrayXd>(s.diff.data(), kept);
        weights = weights.exp();  // vectorised
        double sum = 0.0;
        for (int t = 0; t < kept; ++t) {
          const double w = s.diff[t];
          sum += w;
          const int j = s.kept[t];
          for (int k = s.v.start[j]; k < s.v.start[j + 1]; ++k) acc[s.v.index[k]] += w * s.v.value[k];
        }
        for (int c = 0; c < vd; ++c) acc[c] /= sum;
      }
      double* out = update.row(i).data();
      for (int c = 0; c < vd; ++c) {
        if (acc[c] == 0.0) continue;
        const double a = stored(acc[c], float32);
        acc[c] = 0.0;
        for (int e = head.output.begin(c); e < head.output.end(c); ++e)
          out[head.output.column[e]] += a * head.output.value[e];
      }
    }
  }
}

}  // namespace krc::kernels
