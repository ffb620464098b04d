// The attention weights of one query (attention_weights.hpp): the one statement of krc's
// attention semantics for the dense float64 passes.
#include "krc/runtime/attention_weights.hpp"

#include <cmath>
#include <limits>

namespace krc {

namespace {

// Below this, exp(s - max) is an exact zero in double; the runtime's float64 skips the term.
constexpr double kFloat64Underflow = -746.0;

}  // namespace

Eigen::VectorXd attention_weights(const Eigen::VectorXd& scores, AttentionKind attention,
                                  HeadKind kind) {
  const Eigen::Index keys = scores.size();
  Eigen::VectorXd p = Eigen::VectorXd::Zero(keys);
  if (keys == 0) return p;
  for (Eigen::Index j = 0; j < keys; ++j)
    if (std::isnan(scores[j])) return p.setConstant(std::numeric_limits<double>::quiet_NaN());
  Eigen::Index latest = 0;  // the latest position of the maximum
  for (Eigen::Index j = 1; j < keys; ++j)
    if (scores[j] >= scores[latest]) latest = j;
  const double top = scores[latest];
  if (attention == AttentionKind::Hard && kind == HeadKind::Select) {
    p[latest] = 1.0;
    return p;
  }
  // Softmax's terms, or under hardmax only those at the maximum, each exp(0) = 1; summed over
  // the keys in ascending order.
  const double cutoff = attention == AttentionKind::Hardmax ? top : top + kFloat64Underflow;
  double sum = 0.0;
  for (Eigen::Index j = 0; j < keys; ++j) {
    if (!(scores[j] >= cutoff)) continue;
    p[j] = std::exp(scores[j] - top);
    sum += p[j];
  }
  return p / sum;
}

Eigen::VectorXd attention_scores(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, int t,
                                 double scale) {
  Eigen::VectorXd s(t + 1);
  for (int j = 0; j <= t; ++j) {
    double dot = 0.0;
    for (Eigen::Index c = 0; c < q.cols(); ++c) dot += q(t, c) * k(j, c);
    s[j] = scale * dot;
  }
  return s;
}

Eigen::MatrixXd attention_pattern(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, double scale,
                                  AttentionKind attention, HeadKind kind) {
  const int rows = static_cast<int>(q.rows());
  Eigen::MatrixXd p = Eigen::MatrixXd::Zero(rows, rows);
  for (int t = 0; t < rows; ++t)
    p.row(t).head(t + 1) = attention_weights(attention_scores(q, k, t, scale), attention, kind);
  return p;
}

}  // namespace krc
