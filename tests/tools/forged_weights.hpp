#pragma once
// Weights files a hostile author could write: a valid krc container and config whose tensors
// are all stored sparse with no nonzeros, so that a file of a few kilobytes declares layers,
// heads and lengths of any size the loader's per-tensor limits allow. Built with the container
// writer (write_safetensors) and JSON text of the test's own, not with krc's weights writer.
#include <optional>
#include <string>
#include <vector>

namespace krc::test {

struct ForgedLayer {
  int heads = 0;
  long long head_dim = 0;
  std::optional<long long> mlp_hidden;
};

struct ForgedNetwork {
  long long d_model = 2;
  long long max_len = 1;
  std::vector<ForgedLayer> layers;
  // The metadata documents as raw text (so that they can be anything, deep nesting included).
  std::string automaton =
      R"({"name":"one","states":["a"],"alphabet":["x"],"initial":"a","transitions":{"x":["a"]}})";
  std::optional<std::string> compiler = std::string(R"({"strategy":"scan","krc_version":"0.1.0"})");
};

// The file's bytes.
std::string forged_weights(const ForgedNetwork& network);

}  // namespace krc::test
