#include "naive_forward.hpp"

#include <cmath>
#include <limits>

namespace krc::test {

Eigen::MatrixXd naive_residual(const Network& net, const std::vector<LetterId>& word,
                               AttentionKind attention) {
  const int n = static_cast<int>(word.size()) + 1;
  const int d = net.d_model();
  Eigen::MatrixXd x(n, d);
  for (int t = 0; t < n; ++t) {
    int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    x.row(t) = net.token_embedding.row(token).cast<double>() +
               net.position_embedding.row(t).cast<double>();
  }
  for (const auto& layer : net.layers) {
    Eigen::MatrixXd update = Eigen::MatrixXd::Zero(n, d);
    for (const auto& head : layer.heads) {
      Eigen::MatrixXd q = x * Eigen::MatrixXd(head.query.cast<double>());
      Eigen::MatrixXd k = x * Eigen::MatrixXd(head.key.cast<double>());
      Eigen::MatrixXd v = x * Eigen::MatrixXd(head.value.cast<double>());
      Eigen::MatrixXd o = Eigen::MatrixXd(head.output.cast<double>());
      for (int t = 0; t < n; ++t) {
        Eigen::VectorXd s(t + 1);
        for (int j = 0; j <= t; ++j) s[j] = net.attention_scale * q.row(t).dot(k.row(j));
        Eigen::VectorXd p = Eigen::VectorXd::Zero(t + 1);
        if (attention == AttentionKind::Hard && head.kind == HeadKind::Select) {
          int best = 0;
          for (int j = 1; j <= t; ++j)
            if (s[j] >= s[best]) best = j;  // ties go to the latest position
          p[best] = 1.0;
        } else if (attention == AttentionKind::Hardmax) {
          const double m = s.maxCoeff();
          for (int j = 0; j <= t; ++j) p[j] = s[j] == m ? 1.0 : 0.0;
          p /= p.sum();  // uniform over the maxima
        } else {
          double m = s.maxCoeff();
          for (int j = 0; j <= t; ++j) p[j] = std::exp(s[j] - m);
          p /= p.sum();
        }
        Eigen::RowVectorXd mixed = Eigen::RowVectorXd::Zero(v.cols());
        for (int j = 0; j <= t; ++j) mixed += p[j] * v.row(j);
        update.row(t) += mixed * o;
      }
    }
    x += update;
    if (layer.mlp) {
      const auto& mlp = *layer.mlp;
      Eigen::MatrixXd w1 = Eigen::MatrixXd(mlp.in_weight.cast<double>());
      Eigen::MatrixXd w2 = Eigen::MatrixXd(mlp.out_weight.cast<double>());
      for (int t = 0; t < n; ++t) {
        Eigen::VectorXd h = (w1 * x.row(t).transpose() + mlp.in_bias.cast<double>()).cwiseMax(0.0);
        x.row(t) += (w2 * h + mlp.out_bias.cast<double>()).transpose();
      }
    }
  }
  return x;
}

Eigen::MatrixXd naive_logits(const Network& net, const std::vector<LetterId>& word,
                             AttentionKind attention) {
  return naive_residual(net, word, attention) * Eigen::MatrixXd(net.unembedding.cast<double>());
}

namespace {

using Floats = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;

// out(i, k) = sum_c a(i, c) w(c, k), a float32 running sum over c in order.
Floats matmul(const Floats& a, const Floats& w) {
  Floats out(a.rows(), w.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index k = 0; k < w.cols(); ++k) {
      float sum = 0.0f;
      for (Eigen::Index c = 0; c < a.cols(); ++c) sum += a(i, c) * w(c, k);
      out(i, k) = sum;
    }
  return out;
}

Floats dense(const SparseMatrix& m) { return Floats(Eigen::MatrixXf(m)); }

// The attention weights of query row t in float32: softmax, argmax or hardmax of s[0..t].
std::vector<float> weights_float32(const std::vector<float>& s, int t, AttentionKind attention,
                                   HeadKind kind) {
  std::vector<float> p(t + 1, 0.0f);
  float max = s[0];
  int best = 0;
  for (int j = 1; j <= t; ++j)
    if (s[j] >= s[best]) best = j;  // ties go to the latest position
  max = s[best];
  if (attention == AttentionKind::Hard && kind == HeadKind::Select) {
    p[best] = 1.0f;
    return p;
  }
  float sum = 0.0f;
  for (int j = 0; j <= t; ++j) {
    const float d = s[j] - max;
    p[j] = attention == AttentionKind::Hardmax ? (d == 0.0f ? 1.0f : 0.0f) : std::exp(d);
    sum += p[j];
  }
  for (int j = 0; j <= t; ++j) p[j] = p[j] / sum;
  return p;
}

}  // namespace

Eigen::MatrixXd naive_logits_float32(const Network& net, const std::vector<LetterId>& word,
                                     AttentionKind attention) {
  const int n = static_cast<int>(word.size()) + 1, d = net.d_model();
  const float scale = net.attention_scale;
  Floats x(n, d);
  for (int t = 0; t < n; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    for (int c = 0; c < d; ++c)
      x(t, c) = net.token_embedding(token, c) + net.position_embedding(t, c);
  }
  for (const auto& layer : net.layers) {
    Floats delta = Floats::Zero(n, d);
    for (const auto& head : layer.heads) {
      const Floats q = matmul(x, dense(head.query)), k = matmul(x, dense(head.key));
      const Floats v = matmul(x, dense(head.value)), o = dense(head.output);
      for (int t = 0; t < n; ++t) {
        std::vector<float> s(t + 1);
        for (int j = 0; j <= t; ++j) {
          float dot = 0.0f;
          for (Eigen::Index c = 0; c < q.cols(); ++c) dot += q(t, c) * k(j, c);
          s[j] = scale * dot;
        }
        const std::vector<float> p = weights_float32(s, t, attention, head.kind);
        Floats mixed = Floats::Zero(1, v.cols());
        for (Eigen::Index c = 0; c < v.cols(); ++c)
          for (int j = 0; j <= t; ++j) mixed(0, c) += p[j] * v(j, c);
        const Floats out = matmul(mixed, o);
        for (int c = 0; c < d; ++c) delta(t, c) += out(0, c);
      }
    }
    x += delta;
    if (layer.mlp) {
      const Floats w1t = dense(layer.mlp->in_weight).transpose();
      const Floats w2t = dense(layer.mlp->out_weight).transpose();
      Floats hidden = matmul(x, w1t);
      for (int t = 0; t < n; ++t)
        for (Eigen::Index u = 0; u < hidden.cols(); ++u)
          hidden(t, u) = std::max(hidden(t, u) + layer.mlp->in_bias[u], 0.0f);
      const Floats out = matmul(hidden, w2t);
      for (int t = 0; t < n; ++t)
        for (int c = 0; c < d; ++c) x(t, c) += out(t, c) + layer.mlp->out_bias[c];
    }
  }
  return matmul(x, dense(net.unembedding)).cast<double>();
}

std::vector<int> naive_states(const Network& net, const std::vector<LetterId>& word,
                              AttentionKind attention) {
  Eigen::MatrixXd logits = naive_logits(net, word, attention);
  std::vector<int> states;
  for (int t = 0; t < logits.rows(); ++t) {
    int best = 0;
    int ties = 0;
    for (int q = 0; q < logits.cols(); ++q) {
      if (logits(t, q) > logits(t, best)) {
        best = q;
        ties = 0;
      } else if (q != best && logits(t, q) == logits(t, best))
        ++ties;
    }
    states.push_back(ties ? -1 : best);
  }
  return states;
}

}  // namespace krc::test
