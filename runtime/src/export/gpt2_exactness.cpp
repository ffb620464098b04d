// gpt2_exactness (krc/runtime/gpt2_export.hpp): a proof, from the weights alone, that every
// LayerNorm of the GPT-2 export passes every value its next sublayer reads unchanged
// (compiler/README.md §7, "When it is exact").
//
// With epsilon 4^k and gamma 2^k (k = 30: the default) the kernel computes (x * 2^-k) * 2^k.
// That is exact when the variance is at most 2^(2k - 24) (so it vanishes against epsilon) and
// x * 2^-k is a float: x = 0, or |x| >= 2^(k - 126), or x an integer multiple of 2^(k - 149) (a
// subnormal is a multiple of 2^-149). So it suffices that every value read is a multiple of
// 2^(k - 149); the export takes the smallest k from 30 to 63 for which the proof holds. The
// analysis follows every residual coordinate through the network with an interval [lo, hi] and a
// binary grid g (every value it takes is an integer multiple of 2^-g), both sound for every word
// and every position:
// - float rounding keeps a grid: the exact sum or product of multiples of 2^-g is a multiple of
//   2^-g, and rounding it gives either it (when the float's ulp is at most 2^-g) or a multiple of
//   the ulp, itself a power of two above 2^-g; a product's grid is the sum of its factors';
// - every float is a multiple of 2^-149 (a grid cap);
// - a softmax weight is at least p_min = e^-D / (max_len + 1), D the largest possible score
//   spread between a query's keys; a float of at least 2^-e is a multiple of 2^-(e + 23). When
//   p_min is not a normal float, the weights' grid is unknown (2^-149): a leak e^-D can reach a
//   coordinate whose value would otherwise be 0.
// - a head whose query and key are functions of the position (gpt2_selection.hpp) may be proven
//   to beat every runner-up by at least kUnderflowGap: then every weight is exactly 0 or 1 and
//   the head copies one value unchanged (scan's fetches under `--norm layernorm`); so may a head
//   whose key also reads coordinates in finite value sets (kr's memory heads under `--norm
//   layernorm`: a reset flag).
// The proof is conservative: a network it cannot prove exact may be exact on every word.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "export/gpt2_selection.hpp"
#include "export/gpt2_value_sets.hpp"
#include "krc/runtime/gpt2_export.hpp"

namespace krc {

namespace {

constexpr int kNone = -100000;  // the grid of a coordinate that is always exactly 0
constexpr int kAny = 149;       // every float is a multiple of 2^-149
// With epsilon 4^k and gamma 2^k, multiples of 2^-(149 - k) pass (x * 2^-k) * 2^k exactly, and
// a variance of at most 2^(2k - 24) vanishes against epsilon; the bound asked of the true one
// leaves a factor 2 for the kernel's rounding. k runs from 30 (the default) to 63 (4^63 is the
// largest power of 4 below float32's overflow); the origin of a grid is recorded past the
// finest bound, 149 - 63.
constexpr int kReadable = 149 - 63;
int readable(int k) { return 149 - k; }
double largest_variance(int k) { return std::ldexp(1.0, 2 * k - 25); }
// Intervals are computed in double and widened by the float32 rounding error (widen).
constexpr double kSlack = 0x1p-12;  // on the score spread

struct Range {
  double lo = 0, hi = 0;
  int grid = kNone;
  std::string origin;  // where a grid above kReadable came from
};
using Ranges = std::vector<Range>;

int grid_of(double x) {
  if (x == 0) return kNone;
  int e = 0;
  const double m = std::frexp(std::fabs(static_cast<float>(x)), &e);
  const auto bits = static_cast<std::uint32_t>(std::ldexp(m, 24));  // 24 significant bits
  return -(e - 24 + std::countr_zero(bits));
}

int product_grid(int a, int b) { return a == kNone || b == kNone ? kNone : std::min(a + b, kAny); }

// A float32 sum of `terms` products whose magnitudes add up to at most `mass` is within
// (terms + 1) * 2^-24 * mass of the exact one in any order; it is exact when every partial sum
// is a multiple of 2^-grid below 2^24 of them.
void widen(Range& r, double mass, long long terms) {
  if (r.grid == kNone || mass * std::ldexp(1.0, std::max(r.grid, 0)) <= 0x1p24) return;
  const double pad = static_cast<double>(terms + 1) * 0x1p-24 * mass;
  r.lo -= pad;
  r.hi += pad;
}

double magnitude(const Range& r) { return std::max(std::fabs(r.lo), std::fabs(r.hi)); }

void join_grid(Range& out, int grid, const std::string& origin) {
  if (grid > out.grid) {
    if (grid > kReadable && out.grid <= kReadable) out.origin = origin;
    out.grid = grid;
  }
}

// out[j] += sum over entries (i, j, w) of w * in[i]: `m` is visited as (input, output, weight).
template <typename Visit>
void affine(const Ranges& in, Ranges& out, Visit visit, const std::string& origin) {
  std::vector<double> mass(out.size());
  std::vector<long long> terms(out.size(), 1);
  for (std::size_t j = 0; j < out.size(); ++j) mass[j] = magnitude(out[j]);  // what it adds to
  visit([&](long long i, long long j, float w) {
    const Range& x = in[static_cast<std::size_t>(i)];
    Range& y = out[static_cast<std::size_t>(j)];
    if (x.grid == kNone && x.lo == 0 && x.hi == 0) return;
    y.lo += w > 0 ? w * x.lo : w * x.hi;
    y.hi += w > 0 ? w * x.hi : w * x.lo;
    mass[static_cast<std::size_t>(j)] += std::fabs(w) * magnitude(x);
    ++terms[static_cast<std::size_t>(j)];
    const int grid = product_grid(x.grid, grid_of(w));
    join_grid(y, grid, x.grid > kReadable ? x.origin : origin);
  });
  for (std::size_t j = 0; j < out.size(); ++j) widen(out[j], mass[j], terms[j]);
}

// Calls f(row, col, value) for every stored entry of m.
auto entries(const SparseMatrix& m, bool transposed = false) {
  return [&m, transposed](auto f) {
    for (int r = 0; r < m.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(m, r); it; ++it)
        transposed ? f(it.col(), it.row(), it.value()) : f(it.row(), it.col(), it.value());
  };
}

// Every value fl(token + position) a coordinate starts with, in float32 as the frameworks add.
Ranges embeddings(const Network& n) {
  Ranges x(static_cast<std::size_t>(n.d_model()));
  for (int c = 0; c < n.d_model(); ++c) {
    Range& r = x[static_cast<std::size_t>(c)];
    r.lo = r.hi = n.token_embedding(0, c) + n.position_embedding(0, c);
    for (Eigen::Index t = 0; t < n.token_embedding.rows(); ++t)
      for (Eigen::Index p = 0; p < n.position_embedding.rows(); ++p) {
        const float v = n.token_embedding(t, c) + n.position_embedding(p, c);
        r.lo = std::min<double>(r.lo, v);
        r.hi = std::max<double>(r.hi, v);
      }
    for (float v : n.token_embedding.col(c)) join_grid(r, grid_of(v), "the token embedding");
    for (float v : n.position_embedding.col(c)) join_grid(r, grid_of(v), "the position embedding");
  }
  return x;
}

// The grid of every softmax weight of a head, from the spread of its scores.
int weight_grid(const Ranges& q, const Ranges& k, float scale, int max_len, double& spread) {
  spread = 0;
  double mass = 0;  // the dot products' rounding: each score within (dims + 1) 2^-24 mass
  for (std::size_t j = 0; j < q.size(); ++j) {
    spread += magnitude(q[j]) * (k[j].hi - k[j].lo);
    mass += magnitude(q[j]) * magnitude(k[j]);
  }
  const double rounding = 2 * (static_cast<double>(q.size()) + 2) * 0x1p-24 * mass;
  spread = (spread + rounding) * std::fabs(scale) * (1 + kSlack);
  const double log2_min = -spread / std::log(2.0) - std::log2(max_len + 1.0) - 1;
  if (!(log2_min >= -125)) return kAny;
  return static_cast<int>(std::ceil(-log2_min)) + 23;
}

std::string describe_head(std::size_t layer, const AttentionHead& h, double spread) {
  return "layer " + std::to_string(layer) + " head " + h.name + " (its scores may differ by " +
         std::to_string(spread) +
         ", so its softmax weights may fall below the normal floats: leaks)";
}

// `written`: the coordinates earlier sublayers write (none of them is a function of the position).
// Returns, per head, whether its weights are proven exactly 1 and 0.
// `s`: the value sets before the layer, at position 0 and at the later positions.
std::vector<bool> attention(const Network& n, std::size_t index, Ranges& x,
                            const std::vector<bool>& written, const ValueSets (&s)[2]) {
  const Ranges before = x;
  std::vector<bool> selecting;
  for (const AttentionHead& h : n.layers[index].heads) {
    const auto width = static_cast<std::size_t>(h.query.cols());
    Ranges q(width), k(width), v(static_cast<std::size_t>(h.value.cols()));
    affine(before, q, entries(h.query), "");
    affine(before, k, entries(h.key), "");
    affine(before, v, entries(h.value), "");
    std::optional<double> gap = positional_score_gap(n, h, written);
    if (!gap) gap = flagged_score_gap(n, h, written, s[0], s[1]);
    selecting.push_back(gap && *gap >= kUnderflowGap);
    if (selecting.back()) {  // weights exactly 1 and 0: v passes unchanged
      affine(v, x, entries(h.output), "");
      continue;
    }
    double spread = 0;
    const int p = weight_grid(q, k, n.attention_scale, n.max_len, spread);
    // A convex combination stays within [lo, hi], but for the weights' sum, 1 within
    // (max_len + 1) * 2^-24, and the rounding of its max_len + 1 terms p * v.
    for (Range& r : v) {
      const double pad = (n.max_len + 3.0) * 0x1p-23 * magnitude(r);
      r.lo -= pad;
      r.hi += pad;
      r.grid = product_grid(r.grid, p);
    }
    const std::string origin = describe_head(index, h, spread);
    for (Range& r : v)
      if (r.grid > kReadable && r.origin.empty()) r.origin = origin;
    affine(v, x, entries(h.output), origin);
  }
  return selecting;
}

// A coordinate in a finite value set (gpt2_value_sets.hpp) at position 0 and at the later
// positions takes the interval and grid of those values: they are the values it takes, computed
// exactly.
void refine(Ranges& x, const ValueSets& first, const ValueSets& later) {
  Ranges r(x.size());
  std::vector<int> known(x.size(), 0);
  std::vector<bool> any(x.size(), false);
  for (const ValueSets* s : {&first, &later})
    for (std::size_t g = 0; g < s->coords.size(); ++g)
      for (std::size_t i = 0; i < s->coords[g].size(); ++i) {
        const auto c = static_cast<std::size_t>(s->coords[g][i]);
        ++known[c];
        for (const std::vector<float>& v : s->values[g]) {
          r[c].lo = any[c] ? std::min<double>(r[c].lo, v[i]) : v[i];
          r[c].hi = any[c] ? std::max<double>(r[c].hi, v[i]) : v[i];
          any[c] = true;
          join_grid(r[c], grid_of(v[i]), "the values it takes");
        }
      }
  for (std::size_t c = 0; c < x.size(); ++c)
    if (known[c] == 2) x[c] = r[c];
}

// The residual's largest sum of squares at the positions `s` describes: a group adds its
// values' largest (a one-hot block adds 1), a coordinate in no group its interval's.
double squares(const Ranges& x, const ValueSets& s) {
  double sum = 1;  // the constant coordinate
  for (std::size_t c = 0; c < x.size(); ++c)
    if (s.group[c] < 0) sum += magnitude(x[c]) * magnitude(x[c]);
  for (std::size_t g = 0; g < s.coords.size(); ++g)
    if (!s.coords[g].empty()) sum += group_squares(s, static_cast<int>(g));
  return sum;
}

// Marks the coordinates layer `index` writes (its heads' outputs and its MLP's).
void mark_written(const Network& n, std::size_t index, std::vector<bool>& written) {
  auto mark = [&](long long, long long j, float) { written[static_cast<std::size_t>(j)] = true; };
  for (const AttentionHead& h : n.layers[index].heads) entries(h.output)(mark);
  if (n.layers[index].mlp) entries(n.layers[index].mlp->out_weight, true)(mark);
}

void mlp(const Network& n, std::size_t index, Ranges& x) {
  const Mlp& m = *n.layers[index].mlp;
  Ranges hidden(static_cast<std::size_t>(m.hidden()));
  const std::string origin = "layer " + std::to_string(index) + "'s MLP";
  for (long long u = 0; u < m.hidden(); ++u) {
    Range& h = hidden[static_cast<std::size_t>(u)];
    h.lo = h.hi = m.in_bias[u];
    h.grid = grid_of(m.in_bias[u]);
  }
  affine(x, hidden, entries(m.in_weight, true), origin);
  for (Range& h : hidden) {
    h.lo = std::max(h.lo, 0.0);  // ReLU keeps the value or gives 0: the grid stays
    h.hi = std::max(h.hi, 0.0);
  }
  for (int c = 0; c < n.d_model(); ++c) {
    Range& r = x[static_cast<std::size_t>(c)];
    r.lo += m.out_bias[c];
    r.hi += m.out_bias[c];
    join_grid(r, grid_of(m.out_bias[c]), origin);
  }
  affine(hidden, x, entries(m.out_weight, true), origin);
}

// Coordinates a matrix reads: its rows, or its columns when transposed.
std::vector<bool> reads(const std::vector<const SparseMatrix*>& ms, int d, bool transposed) {
  std::vector<bool> read(static_cast<std::size_t>(d), false);
  for (const SparseMatrix* m : ms)
    entries(*m, transposed)(
        [&](long long i, long long, float) { read[static_cast<std::size_t>(i)] = true; });
  return read;
}

// What a LayerNorm before `what` sees, none of it depending on k (epsilon 4^k, gamma 2^k): the
// residual's variance bound over n_embd coordinates (each value twice, and the constant 1), the
// largest magnitude up to it, and the coordinates it reads on a grid finer than the finest k
// reads (kReadable), in order. The proof records these once; each k is then a check of them.
struct NormFacts {
  std::string what;
  double variance = 0, largest = 0;
  std::vector<std::pair<std::size_t, Range>> fine;
};

// `s`: the value sets at position 0 and at the later positions; `read`: what `what` reads.
void record_norm(const Ranges& x, const ValueSets (&s)[2], const std::vector<bool>& read,
                 long long n_embd, const std::string& what, std::vector<NormFacts>& norms) {
  NormFacts f;
  f.what = what;
  f.largest = norms.empty() ? 0 : norms.back().largest;
  for (const Range& r : x) f.largest = std::max(f.largest, magnitude(r));
  f.variance = 2 * std::max(squares(x, s[0]), squares(x, s[1])) / static_cast<double>(n_embd);
  for (std::size_t c = 0; c < x.size(); ++c)
    if (read[c] && x[c].grid > kReadable) f.fine.emplace_back(c, x[c]);
  norms.push_back(std::move(f));
}

// "" when the LayerNorm is exact with epsilon 4^k and gamma 2^k, else why not.
std::string check_norm(const Network& n, const NormFacts& f, int k) {
  const std::string at_k = std::to_string(k);
  if (f.variance > largest_variance(k))
    return "the residual's variance may reach " + std::to_string(f.variance) + " before " + f.what +
           ", past 2^" + std::to_string(2 * k - 25) +
           ", where it no longer vanishes against epsilon 4^" + at_k + " (values up to " +
           std::to_string(f.largest) + ")";
  for (const auto& [c, r] : f.fine)
    if (r.grid > readable(k))
      return "the LayerNorm before " + f.what + " may round residual coordinate " +
             std::to_string(c) + " (" + n.residual_labels[c] + "): values below 2^-" +
             std::to_string(126 - k) + " that are no multiple of 2^-" + std::to_string(149 - k) +
             " may reach it from " + r.origin + "; such a value changes by at most 2^-" +
             std::to_string(150 - k);
  return "";
}

// Follows the ranges and value sets through the network once, recording every LayerNorm's facts
// in order (a GPT-2 block normalises before its attention and before its MLP, and before the
// unembedding).
std::vector<NormFacts> norm_facts(const Network& n, long long n_embd) {
  std::vector<NormFacts> norms;
  Ranges x = embeddings(n);
  ValueSets s[2] = {initial_value_sets(n, true), initial_value_sets(n, false)};
  refine(x, s[0], s[1]);
  std::vector<bool> written(static_cast<std::size_t>(n.d_model()), false);
  for (std::size_t i = 0; i < n.layers.size(); ++i) {
    const Layer& layer = n.layers[i];
    std::vector<const SparseMatrix*> qkv;
    for (const AttentionHead& h : layer.heads)
      for (const SparseMatrix* m : {&h.query, &h.key, &h.value}) qkv.push_back(m);
    const std::string at = "layer " + std::to_string(i);
    record_norm(x, s, reads(qkv, n.d_model(), false), n_embd, at + "'s attention", norms);
    const std::vector<bool> selecting = attention(n, i, x, written, s);
    attend_value_sets(n, i, selecting, s[1], &s[0]);  // s[0] before the layer
    attend_value_sets(n, i, std::vector<bool>(layer.heads.size(), true), s[0], nullptr);
    refine(x, s[0], s[1]);
    mark_written(n, i, written);  // before layer i + 1's heads read
    if (!layer.mlp) continue;
    record_norm(x, s, reads({&layer.mlp->in_weight}, n.d_model(), true), n_embd, at + "'s MLP",
                norms);
    mlp(n, i, x);
    for (ValueSets& at : s) mlp_value_sets(n, i, at);
    refine(x, s[0], s[1]);
  }
  record_norm(x, s, reads({&n.unembedding}, n.d_model(), false), n_embd, "the unembedding", norms);
  return norms;
}

// The proof with epsilon 4^k and gamma 2^k: every LayerNorm exact, in order.
Gpt2Exactness prove(const Network& n, const std::vector<NormFacts>& norms, int k) {
  Gpt2Exactness e;
  e.norm_exponent = k;
  for (const NormFacts& f : norms) {
    e.largest = f.largest;
    e.reason = check_norm(n, f, k);
    if (!e.reason.empty()) break;
  }
  e.exact = e.reason.empty();
  return e;
}

}  // namespace

// The smallest k from `lowest` that proves it (lowest unless the residual's bounds are large);
// when none does, k = lowest with its reason, and the reason at `highest` where a larger k was
// the hope.
Gpt2Exactness gpt2_exactness(const Network& n, long long n_embd, int lowest, int highest) {
  const std::vector<NormFacts> norms = norm_facts(n, n_embd);
  const Gpt2Exactness first = prove(n, norms, lowest);
  if (first.exact || first.reason.find("variance") == std::string::npos) return first;
  for (int k = lowest + 1; k <= highest; ++k) {
    Gpt2Exactness e = prove(n, norms, k);
    if (e.exact) return e;
    if (k == highest) {
      Gpt2Exactness refused = first;
      refused.reason += "; with epsilon 4^" + std::to_string(k) + ": " + e.reason;
      return refused;
    }
  }
  return first;
}

}  // namespace krc
