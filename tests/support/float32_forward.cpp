#include "float32_forward.hpp"

#include <cmath>

namespace krc::test {

namespace {

// y = x m for a row vector x, each entry of y summed over x's indices in order. Skipping the
// zero entries of m leaves every float32 sum unchanged (adding 0 is exact).
std::vector<float> times(const float* x, const SparseMatrix& m) {
  std::vector<float> y(static_cast<std::size_t>(m.cols()), 0.0f);
  for (int i = 0; i < m.outerSize(); ++i)
    for (SparseMatrix::InnerIterator it(m, i); it; ++it) y[it.col()] += x[i] * it.value();
  return y;
}

// One head's contribution at every position, [n][d_model].
std::vector<std::vector<float>> head_update(const Network& net, const AttentionHead& head,
                                            const RowMatrix& x, AttentionKind attention) {
  const int n = static_cast<int>(x.rows());
  std::vector<std::vector<float>> q(n), k(n), v(n), out(n);
  for (int t = 0; t < n; ++t) {
    q[t] = times(x.row(t).data(), head.query);
    k[t] = times(x.row(t).data(), head.key);
    v[t] = times(x.row(t).data(), head.value);
  }
  std::vector<float> s, p;
  for (int t = 0; t < n; ++t) {
    s.assign(t + 1, 0.0f);
    for (int j = 0; j <= t; ++j) {
      float dot = 0.0f;
      for (std::size_t c = 0; c < q[t].size(); ++c) dot += q[t][c] * k[j][c];
      s[j] = net.attention_scale * dot;
    }
    p.assign(t + 1, 0.0f);
    if (attention == AttentionKind::Hard && head.kind == HeadKind::Select) {
      int best = 0;
      for (int j = 1; j <= t; ++j)
        if (s[j] >= s[best]) best = j;
      p[best] = 1.0f;
    } else {
      float m = s[0];
      for (float e : s) m = std::max(m, e);
      float z = 0.0f;
      for (int j = 0; j <= t; ++j) z += (p[j] = std::exp(s[j] - m));
      for (float& e : p) e /= z;
    }
    std::vector<float> mixed(v[t].size(), 0.0f);
    for (int j = 0; j <= t; ++j)
      for (std::size_t c = 0; c < mixed.size(); ++c) mixed[c] += p[j] * v[j][c];
    out[t] = times(mixed.data(), head.output);
  }
  return out;
}

}  // namespace

RowMatrix float32_residual(const Network& net, const std::vector<LetterId>& word,
                           AttentionKind attention) {
  const int n = static_cast<int>(word.size()) + 1;
  const int d = net.d_model();
  RowMatrix x(n, d);
  for (int t = 0; t < n; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    for (int i = 0; i < d; ++i)
      x(t, i) = net.token_embedding(token, i) + net.position_embedding(t, i);
  }
  for (const auto& layer : net.layers) {
    std::vector<std::vector<float>> delta(n, std::vector<float>(d, 0.0f));
    for (const auto& head : layer.heads) {
      const auto update = head_update(net, head, x, attention);
      for (int t = 0; t < n; ++t)
        for (int i = 0; i < d; ++i) delta[t][i] += update[t][i];
    }
    for (int t = 0; t < n; ++t)
      for (int i = 0; i < d; ++i) x(t, i) += delta[t][i];
    if (!layer.mlp) continue;
    const Mlp& mlp = *layer.mlp;
    for (int t = 0; t < n; ++t) {
      // in_weight is [hidden, d]: unit u's pre-activation sums row u over x's indices in order.
      std::vector<float> h(static_cast<std::size_t>(mlp.hidden()));
      for (int u = 0; u < mlp.hidden(); ++u) {
        float a = 0.0f;
        for (SparseMatrix::InnerIterator it(mlp.in_weight, u); it; ++it)
          a += it.value() * x(t, it.col());
        h[u] = std::max(a + mlp.in_bias[u], 0.0f);
      }
      for (int i = 0; i < d; ++i) {
        float a = 0.0f;
        for (SparseMatrix::InnerIterator it(mlp.out_weight, i); it; ++it)
          a += it.value() * h[it.col()];
        x(t, i) += a + mlp.out_bias[i];
      }
    }
  }
  return x;
}

std::vector<int> float32_states(const Network& net, const std::vector<LetterId>& word,
                                AttentionKind attention) {
  return float32_states(net, float32_residual(net, word, attention));
}

std::vector<int> float32_states(const Network& net, const RowMatrix& x) {
  std::vector<int> states;
  for (int t = 0; t < x.rows(); ++t) {
    const std::vector<float> logits = times(x.row(t).data(), net.unembedding);
    int best = 0, ties = 0;
    for (int q = 1; q < static_cast<int>(logits.size()); ++q) {
      if (logits[q] > logits[best]) {
        best = q;
        ties = 0;
      } else if (logits[q] == logits[best]) {
        ++ties;
      }
    }
    states.push_back(ties ? -1 : best);
  }
  return states;
}

}  // namespace krc::test
