// `krc export FILE --format gpt2 -o DIR`: the checkpoint of krc::gpt2_checkpoint, written whole.
#include "export_gpt2.hpp"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "krc/automata/input_error.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/runtime/gpt2_export.hpp"
#include "krc/runtime/weights_file.hpp"
#include "output_file.hpp"

namespace krc::cli {

namespace {

using nlohmann::json;

void print_summary(const Gpt2ExportArguments& a, const Network& network, const Gpt2Checkpoint& c,
                   double seconds) {
  const Gpt2Shape& s = c.shape;
  std::cout << "GPT-2 checkpoint: " << network.layers.size() << " layers, n_embd " << s.n_embd
            << " (d_model " << s.d << " + a constant, mirrored, padded to a power of two), n_head "
            << s.n_head << " x " << s.head_dim << ", n_inner " << s.inner << ", vocab " << s.vocab()
            << ", n_positions " << network.max_len + 1 << "\n";
  std::cout << "formats (torch dtype the checkpoint is exact in):";
  for (const Gpt2Format& f : c.formats)
    std::cout << "\n  " << f.name << ": " << (f.kept ? "kept" : "not kept, " + f.why);
  std::cout << "\n";
  std::cout << "wrote " << a.output << "/{config.json, model.safetensors, krc_vocab.json, "
            << "krc_gpt2.json, krc_circuit.json} (" << with_thousands(c.tensor_bytes)
            << " bytes of tensors) in " << std::fixed;
  std::cout.precision(2);
  std::cout << seconds << " s\n";
}

}  // namespace

int run_export_gpt2(const Gpt2ExportArguments& a) {
  const auto start = std::chrono::steady_clock::now();
  if (a.output == "-")
    throw InputError("command line", "--output",
                     "a GPT-2 checkpoint is a directory; - cannot hold it");
  front_door::refuse_output_over_inputs(a.output, {a.input});
  const Network network = load_network(a.input);
  const Gpt2Checkpoint c = gpt2_checkpoint(network, a.input, {a.max_bytes, a.allow_inexact});
  // The directory appears whole, in one rename (front_door/output_file.hpp): never a
  // checkpoint that from_pretrained opens with a file missing.
  front_door::write_output_directory(a.output, c.files, {.inputs = {a.input}});
  if (!c.exactness.exact)
    std::cerr << "krc: warning: " << a.output
              << " is not provably exact (--allow-inexact): " << c.exactness.reason << "\n";
  // A format the network is certified in but the checkpoint is not: the surprise to warn of.
  for (const Gpt2Format& f : c.formats)
    if (f.certified && !f.kept && c.exactness.exact)
      std::cerr << "krc: warning: " << a.output << " is not exact in " << f.name
                << ", though the network is: " << f.why << "\n";
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (a.json) {
    std::cout << json{{"input", a.input},
                      {"output", a.output},
                      {"bytes", c.tensor_bytes},
                      {"config", c.config},
                      {"exact", c.exactness.exact},
                      {"inexact_reason", c.exactness.reason},
                      {"formats", gpt2_formats_json(c.formats)},
                      {"seconds", seconds}}
                     .dump(1, ' ', false, json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  print_summary(a, network, c, seconds);
  return 0;
}

}  // namespace krc::cli
