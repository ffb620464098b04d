// The attention sublayer in Arithmetic::Float32 (forward.hpp gives the order of every sum).
// Every head's q, k and v are projected first, then each query row takes one of three paths
// to the same float32 result:
// - runs: the keys so far form few runs of bitwise-equal rows (a counter: BOS, then the rest):
//   one score per run, and the run's terms are identical, so their running sums are replayed
//   (identical_sum.hpp) instead of added one by one;
// - tree: a long row finds its maximum and its few terms above the float32 underflow of expf
//   through bounds on blocks of keys (key_tree.hpp): a select head's one key, or an average
//   head's block of keys (a kr counter past 2048 sums the increments of its block of sqrt(T)
//   positions, and every other key's term is an exact 0);
// - dense: every causal key is scored.
// Terms are visited in ascending key order on every path, and only exact zeros are skipped.
#include <cmath>
#include <cstring>

#include "forward/float32_kernels.hpp"
#include "forward/forward_kernels.hpp"
#include "forward/identical_sum.hpp"
#include "forward/projection.hpp"

namespace krc::kernels::f32 {

namespace {

// 16 floats: one AVX-512 register, two AVX2 ones (GCC/Clang vector extension).
using Vec16 = float __attribute__((vector_size(64)));

// expf(d) is exactly 0 for d <= -104 (e^-104 is below half the smallest subnormal float).
constexpr float kUnderflow = -104.0f;

int round_up_to_16(int n) { return (n + 15) / 16 * 16; }

enum class Mix { Softmax, Argmax, Hardmax };

// fl(scale * (q . k_j)), the dot summed over the query dims in order.
float score(const float* q, const FloatRows& kt, int j, float scale) {
  float dot = 0.0f;
  for (Eigen::Index k = 0; k < kt.rows(); ++k) dot += q[k] * kt(k, j);
  return scale * dot;
}

// The same for keys [j0, j0 + 16), one per lane.
void scores16(const float* q, const FloatRows& kt, int j0, float scale, float* out) {
  Vec16 dot = {};
  for (Eigen::Index k = 0; k < kt.rows(); ++k) {
    Vec16 key;
    std::memcpy(&key, kt.row(k).data() + j0, sizeof key);
    dot += q[k] * key;
  }
  const Vec16 result = scale * dot;
  std::memcpy(out, &result, sizeof result);
}

void copy_value(const HeadState& h, int j, float* acc) {
  for (int k = h.v.start[j]; k < h.v.start[j + 1]; ++k) acc[h.v.index[k]] = h.v.value[k];
}

// Whether a term with exponent d = fl(s - max) is kept, and its weight.
bool kept(Mix mix, float d) { return mix == Mix::Hardmax ? d == 0.0f : d > kUnderflow; }

// acc = sum_t fl(p_t v_kept[t]) with p_t = fl(e_t / Z), Z = sum_t e_t: the kept keys s.kept in
// ascending order with their weights e_t in s.weight.
void finish_softmax(const HeadState& h, int count, Scratch& s) {
  float sum = 0.0f;
  for (int t = 0; t < count; ++t) sum += s.weight[t];
  float* acc = s.acc.data();
  for (int t = 0; t < count; ++t) {
    const float p = s.weight[t] / sum;
    const int j = s.kept[t];
    for (int k = h.v.start[j]; k < h.v.start[j + 1]; ++k) acc[h.v.index[k]] += p * h.v.value[k];
  }
}

// Row i over every causal key.
void mix_dense(const HeadState& h, int i, float scale, Mix mix, Scratch& s) {
  const float* q = h.q.row(i).data();
  float* score = s.score.data();
  for (int j0 = 0; j0 <= i; j0 += 16) scores16(q, h.kt, j0, scale, score + j0);
  int best = 0;
  for (int j = 1; j <= i; ++j)
    if (score[j] >= score[best]) best = j;  // the latest of the maxima
  if (mix == Mix::Argmax) return copy_value(h, best, s.acc.data());
  const float max = score[best];
  int count = 0;
  for (int j = 0; j <= i; ++j) {
    const float d = score[j] - max;
    if (!kept(mix, d)) continue;
    s.kept[count] = j;
    s.weight[count++] = std::exp(d);
  }
  finish_softmax(h, count, s);
}

// Row i through the key tree; returns the number of terms kept.
int mix_tree(const HeadState& h, int i, float scale, Mix mix, Scratch& s) {
  const float* q = h.q.row(i).data();
  const int qd = static_cast<int>(h.q.cols());
  s.query.assign(q, q + qd);
  const KeyTree::Query query(h.tree, s.query.data(), qd, scale, i, 0x1p-24);
  auto scores = [&](int leaf, double* out) {
    float block[KeyTree::kLeaf];
    scores16(q, h.kt, KeyTree::kLeaf * leaf, scale, block);
    for (int t = 0; t < KeyTree::kLeaf; ++t) out[t] = block[t];
  };
  const double max = h.tree.max_score(query, scores);
  if (mix == Mix::Argmax) {
    copy_value(h, h.tree.latest_equal(query, max, scores), s.acc.data());
    return 1;
  }
  int count = 0;
  // A kept term has fl(s - max) > -104, so s > max - 105.
  const double floor = mix == Mix::Hardmax ? max : max - 105.0;
  h.tree.each_at_least(query, floor, scores, [&](int j, double value) {
    const float d = static_cast<float>(value) - static_cast<float>(max);
    if (!kept(mix, d)) return;
    s.kept[count] = j;
    s.weight[count++] = std::exp(d);
  });
  finish_softmax(h, count, s);
  return count;
}

// Row i over the runs of equal keys: run r's keys [begin_r, end_r] all score s_r.
void mix_runs(const HeadState& h, int i, int value_dim, float scale, Mix mix, Scratch& s) {
  const KeyRuns& runs = h.runs;
  const int count = runs.runs();
  const float* q = h.q.row(i).data();
  auto end_of = [&](int r) { return r + 1 < count ? runs.run(r + 1).begin - 1 : i; };
  float* score = s.score.data();
  float max = 0.0f;
  for (int r = 0; r < count; ++r) {
    score[r] = f32::score(q, h.kt, runs.run(r).begin, scale);
    if (r == 0 || score[r] >= max) max = score[r];
  }
  if (mix == Mix::Argmax) {
    int best = 0;
    for (int r = 1; r < count; ++r)
      if (score[r] >= score[best]) best = r;
    return copy_value(h, end_of(best), s.acc.data());  // the latest key of the latest best run
  }
  float sum = 0.0f;
  for (int r = 0; r < count; ++r) {
    const float d = score[r] - max;
    s.weight[r] = kept(mix, d) ? std::exp(d) : 0.0f;
    if (s.weight[r] != 0.0f)
      sum = sequential_sum_of_identical(sum, s.weight[r], end_of(r) - runs.run(r).begin + 1);
  }
  float* acc = s.acc.data();
  for (int r = 0; r < count; ++r) {
    if (s.weight[r] == 0.0f) continue;
    const float p = s.weight[r] / sum;
    bool mixed = false;
    for (int c = 0; c < value_dim; ++c) {
      const KeyRuns::Column& column = runs.column(r, c);
      if (column.mixed)
        mixed = true;
      else if (column.count > 0)
        acc[c] = sequential_sum_of_identical(acc[c], p * column.value, column.count);
    }
    if (!mixed) continue;
    for (int j = runs.run(r).begin; j <= end_of(r); ++j)
      for (int k = h.v.start[j]; k < h.v.start[j + 1]; ++k)
        if (runs.column(r, h.v.index[k]).mixed) acc[h.v.index[k]] += p * h.v.value[k];
  }
}

}  // namespace

void apply_attention(const PreparedLayer& layer, float scale, const ForwardOptions& options,
                     Activations<float>& x, int from, int n, LayerState& state, Scratch& s) {
  const AttentionKind attention = options.attention;
  state.heads.resize(layer.heads.size());
  int widest_value = 0;
  for (std::size_t hi = 0; hi < layer.heads.size(); ++hi) {
    const PreparedHead& head = layer.heads[hi];
    HeadState& h = state.heads[hi];
    // Every sum is a float32 one already: nothing to round.
    kernels::project(
        head, x, from, n, [](float v) { return v; }, h, s.key, s.value);
    h.runs.keep_rows(from);
    if (n > options.key_tree_from_row) h.tree.build(h.kt, from, n);
    widest_value = std::max(widest_value, head.value_dim);
  }
  s.acc.assign(widest_value, 0.0f);
  s.score.resize(round_up_to_16(n));
  s.weight.resize(n);
  s.kept.resize(n);
  s.head_out.assign(x.cols(), 0.0f);
  s.delta.assign(x.cols(), 0.0f);
  for (int i = from; i < n; ++i) {
    for (std::size_t hi = 0; hi < layer.heads.size(); ++hi) {
      const PreparedHead& head = layer.heads[hi];
      HeadState& h = state.heads[hi];
      const Mix mix = attention == AttentionKind::Hardmax ? Mix::Hardmax
                      : attention == AttentionKind::Hard && head.kind == HeadKind::Select
                          ? Mix::Argmax
                          : Mix::Softmax;
      if (h.runs.usable(h, i, head.value_dim)) {
        mix_runs(h, i, head.value_dim, scale, mix, s);
        ++s.run_rows;
      } else if (i >= options.key_tree_from_row && h.tree_use.wanted(i)) {
        h.tree_use.kept(head.kind == HeadKind::Select, i, mix_tree(h, i, scale, mix, s));
        ++s.tree_rows;
      } else {
        mix_dense(h, i, scale, mix, s);
        ++s.dense_rows;
      }
      // The head's output, summed over its value dims in order, then added to the heads' sum.
      for (int c = 0; c < head.value_dim; ++c) {
        const float a = s.acc[c];
        s.acc[c] = 0.0f;
        if (a == 0.0f) continue;
        for (int e = head.output.begin(c); e < head.output.end(c); ++e)
          s.head_out[head.output.column[e]] += a * static_cast<float>(head.output.value[e]);
      }
      layer.attention_writes.for_each([&](int c) {
        s.delta[c] += s.head_out[c];
        s.head_out[c] = 0.0f;
      });
    }
    float* row = x.row(i).data();
    layer.attention_writes.for_each([&](int c) {
      row[c] += s.delta[c];
      s.delta[c] = 0.0f;
    });
  }
}

}  // namespace krc::kernels::f32
