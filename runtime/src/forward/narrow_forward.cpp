// The bf16/fp16 forward pass (narrow_forward.hpp): a straight line, embed, then per layer the
// heads and the MLP, then the unembedding, each stored tensor rounded to the format.
#include "forward/narrow_forward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "krc/automata/interrupt.hpp"

namespace krc::narrow {

namespace {

// Softmax weights below e^-104 are exact zeros in float32 (e^-104 < 2^-150, half the least
// subnormal), so their exp need not be taken.
constexpr float kUnderflow = -104.0f;

std::optional<Mlp> mlp_of(const std::optional<krc::Mlp>& m, Rounding round) {
  if (!m) return std::nullopt;
  Mlp out;
  out.in = Matrix::of(m->in_weight, true, round);
  out.out = Matrix::of(m->out_weight, true, round);
  for (float b : m->in_bias) out.in_bias.push_back(round(b));
  for (float b : m->out_bias) out.out_bias.push_back(round(b));
  for (int u = 0; u < static_cast<int>(out.in_bias.size()); ++u)
    if (out.in_bias[u] > 0.0f || std::isnan(out.in_bias[u])) out.positive_bias.push_back(u);
  return out;
}

float relu(float v) { return std::isnan(v) ? v : std::max(v, 0.0f); }

}  // namespace

Forward::Forward(const Network& network, Arithmetic format, AttentionKind attention)
    : network_(network),
      round_(rounding_of(format)),
      attention_(attention),
      d_(network.d_model()),
      scale_(round_(network.attention_scale)),
      token_(network.token_embedding.unaryExpr(round_)),
      position_(network.position_embedding.unaryExpr(round_)),
      unembedding_(Matrix::of(network.unembedding, false, round_)) {
  for (const krc::Layer& l : network.layers) {
    Layer layer;
    for (const AttentionHead& h : l.heads)
      layer.heads.push_back({h.kind, Matrix::of(h.query, false, round_),
                             Matrix::of(h.key, false, round_), Matrix::of(h.value, false, round_),
                             Matrix::of(h.output, false, round_)});
    layer.mlp = mlp_of(l.mlp, round_);
    layers_.push_back(std::move(layer));
  }
}

Eigen::MatrixXd Forward::run(const std::vector<LetterId>& word) const {
  const int n = static_cast<int>(word.size()) + 1;
  Rows x(static_cast<std::size_t>(n) * d_);
  for (int t = 0; t < n; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    for (int c = 0; c < d_; ++c) x[t * d_ + c] = round_(token_(token, c) + position_(t, c));
  }
  for (const Layer& layer : layers_) {
    interruption_point();  // a layer of one word in bf16 may take seconds
    if (!layer.heads.empty()) attention(layer, x, n);
    if (layer.mlp) mlp(*layer.mlp, x, n);
  }
  const int states = unembedding_.cols;
  Eigen::MatrixXd logits(n, states);
  std::vector<float> acc(states);
  for (int t = 0; t < n; ++t) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    accumulate(unembedding_, x.data() + t * d_, acc.data());
    for (int s = 0; s < states; ++s) logits(t, s) = round_(acc[s]);
  }
  return logits;
}

// x += the heads' outputs, summed as one product over (head, value dim) and rounded once.
void Forward::attention(const Layer& layer, Rows& x, int n) const {
  Rows acc(static_cast<std::size_t>(n) * d_, 0.0f);
  for (const Head& head : layer.heads) {
    const Rows z = head_output(head, x, n);
    for (int t = 0; t < n; ++t)
      accumulate(head.output, z.data() + t * head.output.rows, acc.data() + t * d_);
  }
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_(x[i] + round_(acc[i]));
}

// One head's z_t = sum_j p_tj v_j for every row, rounded: [n x value rows].
Forward::Rows Forward::head_output(const Head& head, const Rows& x, int n) const {
  auto project = [&](const Matrix& w) {
    Rows y(static_cast<std::size_t>(n) * w.cols, 0.0f);
    for (int t = 0; t < n; ++t) accumulate(w, x.data() + t * d_, y.data() + t * w.cols);
    for (float& v : y) v = round_(v);
    return y;
  };
  const Rows q = project(head.query), k = project(head.key), v = project(head.value);
  const int e = head.query.cols, width = head.value.cols;
  std::vector<char> nonfinite_value(n, 0);
  for (int j = 0; j < n; ++j)
    for (int c = 0; c < width; ++c)
      if (!std::isfinite(v[j * width + c])) nonfinite_value[j] = 1;
  Rows z(static_cast<std::size_t>(n) * width, 0.0f);
  std::vector<float> p;
  for (int t = 0; t < n; ++t) {
    p.assign(t + 1, 0.0f);
    for (int j = 0; j <= t; ++j) {
      float s = 0.0f;
      for (int c = 0; c < e; ++c) s += q[t * e + c] * k[j * e + c];
      s = round_(s);
      p[j] = scale_ == 1.0f ? s : round_(s * scale_);
    }
    softmax_row(head.kind, p);
    float* zt = z.data() + t * width;
    for (int j = 0; j <= t; ++j) {
      if (p[j] == 0.0f && !nonfinite_value[j]) continue;  // +-0 terms (see the header)
      for (int c = 0; c < width; ++c) zt[c] += p[j] * v[j * width + c];
    }
    for (int c = 0; c < width; ++c) zt[c] = round_(zt[c]);
  }
  return z;
}

// The scores of one row in, its attention weights (rounded) out. Softmax in float32: the
// row's maximum, w_j = exp(s_j - max) (float32 difference; exp in double, rounded to float32),
// their running sum in key order, w_j / sum. Hard select heads: one-hot on the latest maximum
// (a NaN counts as the maximum). Hardmax: weight 1 on each maximum, normalised the same way.
void Forward::softmax_row(HeadKind kind, std::vector<float>& s) const {
  const int n = static_cast<int>(s.size());
  const bool argmax = attention_ == AttentionKind::Hard && kind == HeadKind::Select;
  float top = -std::numeric_limits<float>::infinity();
  int latest = n - 1, nan_at = -1;
  for (int j = 0; j < n; ++j) {
    if (std::isnan(s[j])) nan_at = j;
    if (s[j] >= top) top = s[j], latest = j;
  }
  if (nan_at >= 0) top = std::numeric_limits<float>::quiet_NaN(), latest = nan_at;
  if (argmax) {
    for (int j = 0; j < n; ++j) s[j] = j == latest ? 1.0f : 0.0f;
    return;
  }
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float d = s[j] - top;
    if (attention_ == AttentionKind::Hardmax)
      s[j] = s[j] == top ? 1.0f : 0.0f;
    else
      s[j] = d < kUnderflow ? 0.0f : static_cast<float>(std::exp(static_cast<double>(d)));
    sum += s[j];
  }
  for (int j = 0; j < n; ++j) s[j] = round_(s[j] / sum);
}

// x += out_bias + W_out ReLU(W_in x + in_bias): the product, then the bias, each rounded.
void Forward::mlp(const Mlp& m, Rows& x, int n) const {
  const int hidden = static_cast<int>(m.in_bias.size());
  std::vector<float> acc(hidden, 0.0f), h(hidden, 0.0f), out(d_);
  std::vector<char> touched_mark(hidden, 0);
  std::vector<int> active;
  for (int t = 0; t < n; ++t) {
    float* xt = x.data() + t * d_;
    const bool finite = std::all_of(xt, xt + d_, [](float v) { return std::isfinite(v); });
    std::fill(out.begin(), out.end(), 0.0f);
    if (!finite || m.in.any_nonfinite || m.out.any_nonfinite) {  // every unit, densely
      std::fill(acc.begin(), acc.end(), 0.0f);
      accumulate(m.in, xt, acc.data());
      for (int u = 0; u < hidden; ++u) h[u] = relu(round_(round_(acc[u]) + m.in_bias[u]));
      accumulate(m.out, h.data(), out.data());
      std::fill(acc.begin(), acc.end(), 0.0f);  // the other path expects untouched units at 0
    } else {  // only the units an input reaches or a positive bias switches on
      active = m.positive_bias;
      for (int r = 0; r < d_; ++r) {
        if (xt[r] == 0.0f) continue;
        for (int e = m.in.start[r]; e < m.in.start[r + 1]; ++e) {
          const int u = m.in.column[e];
          acc[u] += xt[r] * m.in.value[e];
          if (!touched_mark[u]) touched_mark[u] = 1, active.push_back(u);
        }
      }
      std::sort(active.begin(), active.end());
      active.erase(std::unique(active.begin(), active.end()), active.end());
      for (int u : active) h[u] = relu(round_(round_(acc[u]) + m.in_bias[u]));
      accumulate_listed(m.out, active, h.data(), out.data());
      for (int u : active) acc[u] = 0.0f, h[u] = 0.0f, touched_mark[u] = 0;
    }
    for (int c = 0; c < d_; ++c) xt[c] = round_(xt[c] + round_(round_(out[c]) + m.out_bias[c]));
  }
}

}  // namespace krc::narrow
