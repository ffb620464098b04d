// krc's bf16 and fp16 arithmetics (runtime/README.md "bf16 and fp16") against PyTorch running
// tools/krc_torch.py's module cast with model.to(torch.bfloat16 / torch.float16): the state
// and the margin (best logit minus the runner-up) at every position of random words, on zoo
// networks of both strategies, right or wrong. A PyTorch whose CPU has no float16 matmul
// (1.13's "addmm_impl_cpu_ not implemented for 'Half'") checks bf16 only and says so.
#include <doctest/doctest.h>

#include <cmath>

#include "krc/automata/automaton_json.hpp"
#include "torch_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

// Prints, per word on stdin, {"states", "margins"} of the module cast to argv[2]; a NaN or
// infinite margin as null, as `krc run --json` writes it.
std::string cast_program() {
  return "import sys, json, math, torch\nsys.path.insert(0, " +
         json((test::source_dir() / "tools").string()).dump() +
         ")\nimport krc_torch\n"
         "dtype = {'bf16': torch.bfloat16, 'fp16': torch.float16}[sys.argv[2]]\n"
         "model = krc_torch.load(sys.argv[1]).to(dtype)\n"
         "for line in sys.stdin.read().splitlines():\n"
         "    word = line.split()\n"
         "    logits = model(model.tokens([word]))[0].double()\n"
         "    top = logits.topk(2, dim=1).values\n"
         "    margins = [float(m) if math.isfinite(m) else None for m in (top[:, 0] - top[:, "
         "1]).tolist()]\n"
         "    states = [model.states[i] for i in logits.argmax(1).tolist()]\n"
         "    print(json.dumps({'states': states, 'margins': margins}))\n";
}

bool torch_has_half_matmul(const test::TempDir& dir) {
  return test::run_python_code(dir,
                               "import torch\n(torch.ones(2, 2).half() @ torch.ones(2, 2).half())")
             .status == 0;
}

}  // namespace

TEST_CASE("bf16 and fp16: krc run agrees with the PyTorch module cast to that format") {
  KRC_REQUIRE_TORCH();
  test::TempDir dir;
  std::vector<std::string> formats{"bf16"};
  if (torch_has_half_matmul(dir))
    formats.push_back("fp16");
  else
    MESSAGE("this PyTorch has no float16 matmul on the CPU: bf16 only");
  const std::pair<const char*, const char*> cases[] = {
      {"parity", "scan"}, {"parity", "kr"},      {"symmetric_3", "scan"},
      {"cyclic_5", "kr"}, {"gridworld_9", "kr"}, {"flipflop_2", "kr"}};
  std::mt19937_64 rng(21);
  long long compared = 0;
  for (const auto& [name, strategy] : cases) {
    CAPTURE(name);
    CAPTURE(strategy);
    const auto path = test::source_dir() / "automata" / "zoo" / (std::string(name) + ".json");
    const Automaton a = automaton_from_json(json::parse(test::read_text(path)), path.string());
    const std::string model = test::compile_zoo(dir, name, "model.safetensors",
                                                {"--strategy", strategy, "--max-len", "96"});
    const test::Words words = test::random_words(a, rng, 2, 96, 96);
    std::string input;
    for (const auto& w : words.letters) {
      for (std::size_t i = 0; i < w.size(); ++i) input += (i ? " " : "") + w[i];
      input += "\n";
    }
    for (const std::string& format : formats) {
      CAPTURE(format);
      const auto torch = test::run_python_code(dir, cast_program(), {model, format}, input);
      REQUIRE(torch.status == 0);
      std::istringstream lines(torch.out);
      for (const auto& w : words.letters) {
        std::string line;
        REQUIRE(std::getline(lines, line));
        const json mine = test::krc_run(model, w, {"--arithmetic", format});
        const json theirs = json::parse(line);
        CHECK(theirs["states"] == mine["states"]);
        CHECK(theirs["margins"] == mine["margins"]);
        compared += static_cast<long long>(w.size()) + 1;
      }
    }
  }
  CHECK(compared > 1000);
}
