#include "naive_forward.hpp"

#include <cmath>

namespace krc::test {

namespace {
Eigen::MatrixXd dense(const SparseMatrix& m) { return Eigen::MatrixXf(m).cast<double>(); }
}  // namespace

Eigen::MatrixXd naive_logits(const Network& network, const std::vector<LetterId>& word,
                             AttentionKind attention) {
  const int T = static_cast<int>(word.size()) + 1;
  const int d = network.d_model();
  Eigen::MatrixXd x(T, d);
  for (int t = 0; t < T; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    x.row(t) = network.token_embedding.row(token).cast<double>() +
               network.position_embedding.row(t).cast<double>();
  }
  for (const Layer& layer : network.layers) {
    Eigen::MatrixXd delta = Eigen::MatrixXd::Zero(T, d);
    for (const AttentionHead& head : layer.heads) {
      Eigen::MatrixXd q = x * dense(head.query), k = x * dense(head.key), v = x * dense(head.value);
      Eigen::MatrixXd o = dense(head.output);
      for (int i = 0; i < T; ++i) {
        std::vector<double> score(i + 1);
        double max = -INFINITY;
        for (int j = 0; j <= i; ++j) {
          score[j] = network.attention_scale * q.row(i).dot(k.row(j));
          max = std::max(max, score[j]);
        }
        Eigen::RowVectorXd mixed = Eigen::RowVectorXd::Zero(v.cols());
        if (attention == AttentionKind::Hard && head.kind == HeadKind::Select) {
          int latest_best = 0;
          for (int j = 0; j <= i; ++j)
            if (score[j] == max) latest_best = j;
          mixed = v.row(latest_best);
        } else {
          double total = 0;
          for (int j = 0; j <= i; ++j) {
            const double w = std::exp(score[j] - max);
            total += w;
            mixed += w * v.row(j);
          }
          mixed /= total;
        }
        delta.row(i) += mixed * o;
      }
    }
    x += delta;
    if (layer.mlp) {
      const Mlp& m = *layer.mlp;
      Eigen::MatrixXd pre = x * dense(m.in_weight).transpose();
      pre.rowwise() += m.in_bias.cast<double>().transpose();
      Eigen::MatrixXd hidden = pre.cwiseMax(0.0);
      Eigen::MatrixXd out = hidden * dense(m.out_weight).transpose();
      out.rowwise() += m.out_bias.cast<double>().transpose();
      x += out;
    }
  }
  return x * dense(network.unembedding);
}

}  // namespace krc::test
