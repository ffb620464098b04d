// The residual dimensions some layer writes (certify_common.hpp): the one support fact both
// certifiers start from (a dimension no layer writes holds the embedding's value throughout).
#include "certify/certify_common.hpp"

namespace krc::certify_detail {

std::vector<char> written_dimensions(const Network& net) {
  const int d = net.d_model();
  std::vector<char> written(d, 0);
  for (const Layer& layer : net.layers) {
    for (const AttentionHead& h : layer.heads)
      for (int r = 0; r < h.output.outerSize(); ++r)
        for (SparseMatrix::InnerIterator it(h.output, r); it; ++it)
          if (it.value() != 0.0f) written[it.col()] = 1;
    if (!layer.mlp) continue;
    for (int r = 0; r < layer.mlp->out_weight.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(layer.mlp->out_weight, r); it; ++it)
        if (it.value() != 0.0f) written[r] = 1;
    for (int r = 0; r < d; ++r)
      if (layer.mlp->out_bias[r] != 0.0f) written[r] = 1;
  }
  return written;
}

}  // namespace krc::certify_detail
