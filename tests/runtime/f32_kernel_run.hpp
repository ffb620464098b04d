#pragma once
// The Float32 kernels run on one word layer by layer, as ForwardPass runs them (softmax, one
// thread), for the runtime tests that compare the kernels' residual stream with the test
// support's float32 oracle or count which path each row took.
#include <vector>

#include "forward/float32_kernels.hpp"
#include "forward/prepared_network.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc::test {

struct F32KernelRun {
  kernels::Activations<float> x;    // the residual stream after the last layer
  kernels::f32::Scratch attention;  // its row counters say which path each row took
  kernels::f32::MlpScratch mlp;     // likewise for the MLP rows (clamp_rows, ...)
};

// BOS then the word embedded (token plus position), then every layer's attention and MLP.
F32KernelRun run_f32_kernels(const Network& net, const PreparedNetwork& prepared,
                             const std::vector<LetterId>& word);

}  // namespace krc::test
