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
