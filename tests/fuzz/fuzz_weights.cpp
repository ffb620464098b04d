// libFuzzer target: the weights reader, then what every user of a loaded network does. Any
// bytes must be refused as bad input (InputError) or over a limit (LimitError), or give a
// network that runs on a short word and that the writer writes and the reader reads back
// (krc never writes what it cannot read).
#include <cstddef>
#include <cstdint>
#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/network_summary.hpp"
#include "krc/runtime/weights_file.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  krc::set_memory_budget(std::uint64_t{256} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  krc::Network network;
  try {
    network = krc::network_from_safetensors(krc::parse_safetensors(bytes, "fuzz"), "fuzz");
  } catch (const krc::InputError&) {
    return 0;
  } catch (const krc::LimitError&) {
    return 0;
  }
  try {
    // Up to three letters: 0, 1, 0 (within the vocabulary and max_len).
    const std::size_t letters = network.vocabulary.size() - 1;
    std::vector<krc::LetterId> word;
    for (int t = 0; t < std::min(3, network.max_len); ++t)
      word.push_back(static_cast<krc::LetterId>(t % 2 % letters));
    krc::ForwardOptions options;
    options.threads = 1;
    for (auto attention : {krc::AttentionKind::Softmax, krc::AttentionKind::Hard}) {
      options.attention = attention;
      krc::ForwardPass(network, options).run(word);
    }
    (void)krc::network_summary(network);
    const std::string written = krc::network_to_safetensors(network);
    (void)krc::network_from_safetensors(krc::parse_safetensors(written, "rewritten"), "rewritten");
  } catch (const krc::LimitError&) {
    // A budget check can refuse the run of a network the loader accepted; that is all.
  }
  return 0;
}
