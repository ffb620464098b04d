#pragma once
// `krc export --format gpt2 -o DIR`: a krc network as a stock Hugging Face GPT2LMHeadModel
// checkpoint (config.json, model.safetensors, krc_vocab.json, krc_gpt2.json) whose LayerNorms
// are the identity bit for bit in PyTorch's float32 CPU kernel. The layout and why it is exact:
// compiler/README.md "LayerNorm-proof residual stream"; the files: tools/README.md "Exporting".
#include <string>

namespace krc::cli {

struct Gpt2ExportArguments {
  std::string input, output;
  long long max_bytes = 2LL << 30;
  bool json = false;
};

int run_export_gpt2(const Gpt2ExportArguments& a);

}  // namespace krc::cli
