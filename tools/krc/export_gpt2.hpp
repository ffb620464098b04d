#pragma once
// `krc export --format gpt2 -o DIR`: writes the checkpoint krc::gpt2_checkpoint builds (the
// export itself lives in the runtime library, krc/runtime/gpt2_export.hpp, shared with the Python
// package's Network.to_hf); the files: tools/README.md "A stock GPT-2 checkpoint".
#include <string>

namespace krc::cli {

struct Gpt2ExportArguments {
  std::string input, output;
  long long max_bytes = 2LL << 30;
  bool json = false;
  bool allow_inexact = false;
};

int run_export_gpt2(const Gpt2ExportArguments& a);

}  // namespace krc::cli
