#include "naive_forward.hpp"

#include <cmath>
#include <functional>
#include <limits>

namespace krc::test {

namespace {

// How a head turns its scores into weights.
enum class Weights { Softmax, LatestArgmax, UniformOverMaxima };

Weights weights_of(AttentionKind attention, HeadKind kind) {
  return attention == AttentionKind::Hard && kind == HeadKind::Select ? Weights::LatestArgmax
                                                                      : Weights::Softmax;
}

Eigen::VectorXd attention_weights(const Eigen::VectorXd& s, Weights rule) {
  const int n = static_cast<int>(s.size());
  Eigen::VectorXd p = Eigen::VectorXd::Zero(n);
  const double m = s.maxCoeff();
  if (rule == Weights::LatestArgmax) {
    int best = 0;
    for (int j = 1; j < n; ++j)
      if (s[j] >= s[best]) best = j;  // ties go to the latest position
    p[best] = 1.0;
  } else if (rule == Weights::UniformOverMaxima) {
    for (int j = 0; j < n; ++j) p[j] = s[j] == m ? 1.0 : 0.0;
  } else {
    for (int j = 0; j < n; ++j) p[j] = std::exp(s[j] - m);
  }
  return p / p.sum();
}

Eigen::MatrixXd residual(const Network& net, const std::vector<LetterId>& word,
                         const std::function<Weights(HeadKind)>& rule) {
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
        const Eigen::VectorXd p = attention_weights(s, rule(head.kind));
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

std::vector<int> argmax_states(const Eigen::MatrixXd& logits) {
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

}  // namespace

Eigen::MatrixXd naive_residual(const Network& net, const std::vector<LetterId>& word,
                               AttentionKind attention) {
  return residual(net, word, [&](HeadKind kind) { return weights_of(attention, kind); });
}

Eigen::MatrixXd naive_logits(const Network& net, const std::vector<LetterId>& word,
                             AttentionKind attention) {
  return naive_residual(net, word, attention) * Eigen::MatrixXd(net.unembedding.cast<double>());
}

std::vector<int> naive_states(const Network& net, const std::vector<LetterId>& word,
                              AttentionKind attention) {
  return argmax_states(naive_logits(net, word, attention));
}

Eigen::MatrixXd naive_logits_hardmax(const Network& net, const std::vector<LetterId>& word) {
  return residual(net, word, [](HeadKind) { return Weights::UniformOverMaxima; }) *
         Eigen::MatrixXd(net.unembedding.cast<double>());
}

std::vector<int> naive_states_hardmax(const Network& net, const std::vector<LetterId>& word) {
  return argmax_states(naive_logits_hardmax(net, word));
}

}  // namespace krc::test
