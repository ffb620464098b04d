#include "f32_kernel_run.hpp"

#include "krc/runtime/forward.hpp"

namespace krc::test {

F32KernelRun run_f32_kernels(const Network& net, const PreparedNetwork& prepared,
                             const std::vector<LetterId>& word) {
  const int n = static_cast<int>(word.size()) + 1;
  F32KernelRun run{kernels::Activations<float>(n, net.d_model()), {}, {}};
  for (int t = 0; t < n; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    run.x.row(t) = net.token_embedding.row(token) + net.position_embedding.row(t);
  }
  std::vector<kernels::f32::LayerState> states(prepared.layers.size());
  const ForwardOptions options{AttentionKind::Softmax, Arithmetic::Float32, 1};
  for (std::size_t l = 0; l < prepared.layers.size(); ++l) {
    const PreparedLayer& layer = prepared.layers[l];
    if (!layer.heads.empty())
      kernels::f32::apply_attention(layer, net.attention_scale, options, run.x, 0, n, states[l],
                                    run.attention);
    if (layer.mlp) kernels::f32::apply_mlp(*layer.mlp, run.x, 0, n, run.mlp);
  }
  return run;
}

}  // namespace krc::test
