// The attention sublayer over a word (or over the rows of a word after the prefix it shares
// with the previous word). Every head's q, k and v are projected first (from the few input
// dims the head reads), then the rows are updated block by block: scores of a
// block of query rows against the causal keys (a small GEMM in double), softmax terms below the
// threshold skipped before exp, value sums over the few nonzeros of each value row, output
// rows scattered into the block, which is rounded back into x once. Rows whose keys so far
// take few distinct values (a counter's: BOS and the rest) are summed over groups of equal
// keys instead (key_groups.cpp): O(groups) per row instead of O(t). Other rows past
// options.key_tree_from_row find their few nonzero terms through bounds on blocks of keys
// (key_tree.hpp): a select head's key, or the block of keys a kr counter's average head sums.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "forward/forward_kernels.hpp"
#include "forward/key_tree.hpp"
#include "forward/projection.hpp"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace krc::kernels {

namespace {

constexpr int kQueryBlock = 64;
static_assert(kQueryBlock == sizeof(AttentionScratch::row_max) / sizeof(double));

// 8 doubles: one AVX-512 register, two AVX2 ones (GCC/Clang vector extension).
using Vec8 = double __attribute__((vector_size(64)));

int round_up_to_16(int n) { return (n + 15) / 16 * 16; }

// Softmax terms whose weight is an exact zero in the stored precision need no exp. Hardmax
// keeps only the terms at the maximum, each with weight exp(0) = 1.
double skip_threshold(const ForwardOptions& options) {
  if (options.attention == AttentionKind::Hardmax) return 0.0;
  return options.arithmetic == Arithmetic::Float64 ? -746.0 : -104.0;
}

// scores(i - r0, j) = scale * q_i . k_j for the rows i in [r0, r1) and the keys j <= i (up
// to a multiple of 16; entries beyond i are never read), and row_max[i - r0] = the largest of
// them (saving softmax a pass over the row). A tile of 4 query rows x 16 keys keeps 8
// independent vector sums going; the keys' tile stays in L1 while the block's rows go by.
// Each score sums over the query dims in order, so it does not depend on the tiling.
void causal_scores(const DoubleRows& q, const DoubleRows& kt, int r0, int r1, double scale,
                   DoubleRows& scores, double* row_max) {
  const int qd = static_cast<int>(q.cols());
  constexpr double lowest = -std::numeric_limits<double>::infinity();
  Vec8 best[kQueryBlock];
  for (int r = 0; r < r1 - r0; ++r) {
    best[r] = Vec8{} + lowest;
    row_max[r] = lowest;
  }
  for (int j = 0; j < r1; j += 16) {
    for (int i = r0; i < r1; i += 4) {
      const int rows = std::min(4, r1 - i);
      if (j >= i + rows) continue;  // causal: no row of this group reads these keys
      const double* query[4];
      for (int r = 0; r < 4; ++r) query[r] = q.row(std::min(i + r, r1 - 1)).data();
      Vec8 low[4] = {}, high[4] = {};
      for (int k = 0; k < qd; ++k) {
        Vec8 key_low, key_high;
        std::memcpy(&key_low, kt.row(k).data() + j, sizeof key_low);
        std::memcpy(&key_high, kt.row(k).data() + j + 8, sizeof key_high);
        for (int r = 0; r < 4; ++r) {
          low[r] += query[r][k] * key_low;
          high[r] += query[r][k] * key_high;
        }
      }
      for (int r = 0; r < rows; ++r) {
        const Vec8 out_low = scale * low[r], out_high = scale * high[r];
        double* row = scores.row(i - r0 + r).data();
        std::memcpy(row + j, &out_low, sizeof out_low);
        std::memcpy(row + j + 8, &out_high, sizeof out_high);
        Vec8& b = best[i - r0 + r];
        if (j + 16 <= i + r + 1) {  // every key of the tile is causal for this row
          b = b > out_low ? b : out_low;
          b = b > out_high ? b : out_high;
        } else {
          for (int t = j; t <= i + r; ++t)
            row_max[i - r0 + r] = std::max(row_max[i - r0 + r], row[t]);
        }
      }
    }
  }
  for (int r = 0; r < r1 - r0; ++r)
    for (int t = 0; t < 8; ++t) row_max[r] = std::max(row_max[r], best[r][t]);
}

// The scores of keys [16 leaf, 16 leaf + 16) for query row i, with the arithmetic of
// causal_scores (lanes summed over the query dims in order from zero, then scaled).
void leaf_scores(const DoubleRows& q, const DoubleRows& kt, int i, int leaf, double scale,
                 double* out) {
  const int qd = static_cast<int>(q.cols()), j = KeyTree::kLeaf * leaf;
  const double* query = q.row(i).data();
  Vec8 low = {}, high = {};
  for (int k = 0; k < qd; ++k) {
    Vec8 key_low, key_high;
    std::memcpy(&key_low, kt.row(k).data() + j, sizeof key_low);
    std::memcpy(&key_high, kt.row(k).data() + j + 8, sizeof key_high);
    low += query[k] * key_low;
    high += query[k] * key_high;
  }
  const Vec8 out_low = scale * low, out_high = scale * high;
  std::memcpy(out, &out_low, sizeof out_low);
  std::memcpy(out + 8, &out_high, sizeof out_high);
}

// Whether any of score[j..j+8) is >= cutoff: one vector compare where the CPU has one.
inline bool any_of_8_above(const double* score, double cutoff) {
#if defined(__AVX512F__)
  return _mm512_cmp_pd_mask(_mm512_loadu_pd(score), _mm512_set1_pd(cutoff), _CMP_GE_OQ) != 0;
#elif defined(__AVX__)
  const __m256d c = _mm256_set1_pd(cutoff);
  const __m256d m = _mm256_or_pd(_mm256_cmp_pd(_mm256_loadu_pd(score), c, _CMP_GE_OQ),
                                 _mm256_cmp_pd(_mm256_loadu_pd(score + 4), c, _CMP_GE_OQ));
  return _mm256_movemask_pd(m) != 0;
#else
  bool any = false;
  for (int t = 0; t < 8; ++t) any |= score[t] >= cutoff;
  return any;
#endif
}

// Indices j < keys with score[j] >= cutoff, and score[j] - max; returns how many. Almost
// all scores fail the test, so it goes 8 at a time.
int keep_above(const double* score, int keys, double cutoff, double max, int* kept, double* diff) {
  int count = 0, j = 0;
  for (; j + 8 <= keys; j += 8) {
    if (!any_of_8_above(score + j, cutoff)) continue;
    for (int t = j; t < j + 8; ++t)
      if (score[t] >= cutoff) {
        kept[count] = t;
        diff[count++] = score[t] - max;
      }
  }
  for (; j < keys; ++j)
    if (score[j] >= cutoff) {
      kept[count] = j;
      diff[count++] = score[j] - max;
    }
  return count;
}

void copy_value(const HeadState& h, int j, double* acc) {
  for (int k = h.v.start[j]; k < h.v.start[j + 1]; ++k) acc[h.v.index[k]] = h.v.value[k];
}

// acc = sum of the kept terms' weights times their value rows, normalised: the kept keys
// s.kept[0, kept) in ascending order with their exponents s.diff = score - max.
void mix_kept(const PreparedHead& head, const HeadState& h, int kept, AttentionScratch& s) {
  double* acc = s.acc.data();
  exp_in_place(s.diff, kept);
  double sum = 0.0;
  for (int t = 0; t < kept; ++t) {
    const double w = s.diff[t];
    sum += w;
    const int j = s.kept[t];
    for (int k = h.v.start[j]; k < h.v.start[j + 1]; ++k) acc[h.v.index[k]] += w * h.v.value[k];
  }
  for (int c = 0; c < head.value_dim; ++c) acc[c] /= sum;
}

// acc = the head's attention-weighted value sum for query row i (scores of keys 0..i).
void mix_values(const PreparedHead& head, const HeadState& h, const double* score, int keys,
                double max, bool argmax, double threshold, AttentionScratch& s) {
  if (argmax) {
    int best = 0;
    for (int j = 1; j < keys; ++j)
      if (score[j] >= score[best]) best = j;  // ties go to the latest position
    copy_value(h, best, s.acc.data());
    return;
  }
  mix_kept(head, h, keep_above(score, keys, max + threshold, max, s.kept.data(), s.diff.data()), s);
}

// The same for a row through the key tree: the exact maximum, then only the keys whose bound
// reaches the cutoff.
// Returns the number of terms kept.
int mix_values_by_tree(const PreparedHead& head, const HeadState& h, int i, double scale,
                       bool argmax, double threshold, AttentionScratch& s) {
  const KeyTree::Query query(h.tree, h.q.row(i).data(), head.query_dim, scale, i, 0x1p-53);
  auto scores = [&](int leaf, double* out) { leaf_scores(h.q, h.kt, i, leaf, scale, out); };
  const double max = h.tree.max_score(query, scores);
  if (argmax) {
    copy_value(h, h.tree.latest_equal(query, max, scores), s.acc.data());
    return 1;
  }
  int kept = 0;
  h.tree.each_at_least(query, max + threshold, scores, [&](int j, double score) {
    s.kept[kept] = j;
    s.diff[kept++] = score - max;
  });
  mix_kept(head, h, kept, s);
  return kept;
}

// One head's output for the query rows [r0, r1) of a block, added into s.block. Rows whose
// keys so far fall into few groups go the grouped way, other long rows the key tree;
// the others need the scores of every causal key, computed for the block's span of such rows.
void attend_block(const PreparedHead& head, HeadState& h, int r0, int r1, double scale,
                  double threshold, bool float32, const ForwardOptions& options,
                  AttentionScratch& s) {
  const bool argmax = options.attention == AttentionKind::Hard && head.kind == HeadKind::Select;
  auto write_output = [&](int i) {
    double* out = s.block.row(i - r0).data();
    for (int c = 0; c < head.value_dim; ++c) {
      if (s.acc[c] == 0.0) continue;
      const double a = stored(s.acc[c], float32);
      s.acc[c] = 0.0;
      for (int e = head.output.begin(c); e < head.output.end(c); ++e)
        out[head.output.column[e]] += a * head.output.value[e];
    }
  };
  int dense_begin = r1, dense_end = r0;
  for (int i = r0; i < r1; ++i) {
    s.dense_row[i - r0] = 0;
    if (h.groups.grouped(h, i)) {
      h.groups.mix(h, i, head.value_dim, scale, argmax, threshold, s);
      ++s.grouped_rows;
    } else if (i >= options.key_tree_from_row && h.tree_use.wanted(i)) {
      h.tree_use.kept(head.kind == HeadKind::Select, i,
                      mix_values_by_tree(head, h, i, scale, argmax, threshold, s));
      ++s.tree_rows;
    } else {
      s.dense_row[i - r0] = 1;
      dense_begin = std::min(dense_begin, i);
      dense_end = i + 1;
      ++s.dense_rows;
      continue;
    }
    write_output(i);
  }
  if (dense_begin >= dense_end) return;
  causal_scores(h.q, h.kt, dense_begin, dense_end, scale, s.scores, s.row_max);
  for (int i = dense_begin; i < dense_end; ++i) {
    if (!s.dense_row[i - r0]) continue;
    mix_values(head, h, s.scores.row(i - dense_begin).data(), i + 1, s.row_max[i - dense_begin],
               argmax, threshold, s);
    write_output(i);
  }
}

}  // namespace

template <typename Act>
void apply_attention(const PreparedLayer& layer, double scale, const ForwardOptions& options,
                     Activations<Act>& x, int from, int n, LayerAttentionState& state,
                     AttentionScratch& s) {
  const bool float32 = std::is_same_v<Act, float>;
  const double threshold = skip_threshold(options);
  const int d = static_cast<int>(x.cols());
  state.heads.resize(layer.heads.size());
  int widest_value = 0;
  for (std::size_t h = 0; h < layer.heads.size(); ++h) {
    project(
        layer.heads[h], x, from, n, [float32](double v) { return stored(v, float32); },
        state.heads[h], s.key, s.dense_v);
    state.heads[h].groups.keep_rows(from);
    if (n > options.key_tree_from_row) state.heads[h].tree.build(state.heads[h].kt, from, n);
    widest_value = std::max(widest_value, layer.heads[h].value_dim);
  }
  s.acc.assign(widest_value, 0.0);
  if (s.diff.size() < n + 8) s.diff.resize(n + 8);
  s.kept.resize(n);
  if (s.scores.cols() < round_up_to_16(n)) s.scores.resize(kQueryBlock, round_up_to_16(n));
  s.block.resize(kQueryBlock, d);

  // q, k and v of every position are known, so x can be updated while the blocks go by.
  for (int r0 = from; r0 < n; r0 += kQueryBlock) {
    const int r1 = std::min(n, r0 + kQueryBlock);
    for (int i = r0; i < r1; ++i) {
      const Act* row = x.row(i).data();
      double* block = s.block.row(i - r0).data();
      layer.attention_writes.for_each([&](int c) { block[c] = static_cast<double>(row[c]); });
    }
    for (std::size_t hi = 0; hi < layer.heads.size(); ++hi)
      attend_block(layer.heads[hi], state.heads[hi], r0, r1, scale, threshold, float32, options, s);
    for (int i = r0; i < r1; ++i) {
      Act* row = x.row(i).data();
      const double* block = s.block.row(i - r0).data();
      layer.attention_writes.for_each([&](int c) { row[c] = static_cast<Act>(block[c]); });
    }
  }
}

template void apply_attention<float>(const PreparedLayer&, double, const ForwardOptions&,
                                     Activations<float>&, int, int, LayerAttentionState&,
                                     AttentionScratch&);
template void apply_attention<double>(const PreparedLayer&, double, const ForwardOptions&,
                                      Activations<double>&, int, int, LayerAttentionState&,
                                      AttentionScratch&);

}  // namespace krc::kernels
