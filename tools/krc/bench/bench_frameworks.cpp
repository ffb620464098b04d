// `krc bench frameworks FILE... [--words K] [--length N] [--repetitions R] [--seed S] [--json]`:
// krc's runtime, PyTorch (dense, and sparse) and onnxruntime on the same words in one Python
// process (tools/bench_frameworks.py, which imports krc's package with the extension built beside
// this binary, so that the runtime timed is this build's), interleaved round by round, at one
// thread each; per method the median CPU seconds per word, the ratio to krc, and whether every
// position was the automaton's state; krc's useful GFLOP/s against a dense sgemm's peak measured
// in the same process. This file finds the script and the Python and passes the options on.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "bench_suite.hpp"
#include "python_script.hpp"

namespace krc::cli {

namespace {

namespace fs = std::filesystem;

struct FrameworksBenchArguments {
  std::vector<std::string> files;
  int words = 4, length = 0, repetitions = 5, seed = 1;
  std::string script, python;
  bool json = false;
};

int run_frameworks_bench(FrameworksBenchArguments a) {
  const fs::path script = find_tool_script(a.script, "bench_frameworks.py");
  a.python = find_python(a.python, script);
  std::string command = shell_quote(a.python) + " " + shell_quote(script.string());
  const fs::path core = core_dir_beside_binary();
  if (!core.empty()) command += " --core-dir " + shell_quote(core.string());
  command += " --words " + std::to_string(a.words) + " --repetitions " +
             std::to_string(a.repetitions) + " --seed " + std::to_string(a.seed);
  if (a.length > 0) command += " --length " + std::to_string(a.length);
  if (a.json) command += " --json";
  for (const auto& file : a.files) command += " " + shell_quote(file);
  return run_python_script(command, "bench frameworks", a.python + " " + script.string());
}

const RegisterBenchSuite frameworks_suite{BenchSuite{
    "frameworks",
    "krc vs PyTorch (dense, sparse) and onnxruntime: same words, one process, interleaved, one "
    "thread, checked against the automaton; useful GFLOP/s against a measured sgemm peak",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<FrameworksBenchArguments>();
      sub.footer(
          "Methods: krc (Network.run of krc's Python package, one word a call), torch "
          "(load_torch, dense float32, inference_mode), torch-sparse (load_torch(sparse=True): MLP "
          "and head matrices as torch.sparse CSR), onnxruntime (the package's to_onnx, one "
          "session). Every method runs at one thread (torch.set_num_threads(1), onnxruntime's "
          "intra- and inter-op threads 1, BLAS pools 1), in one Python process "
          "(tools/bench_frameworks.py), on the same random words, one word a call. After one "
          "untimed call each, R rounds each run every word through every method, the methods' "
          "order rotated from round to round. Reported per method: the median CPU seconds per "
          "word (and wall), the ratio to krc, and whether its state (argmax of the logits) was "
          "the automaton's at every position of every call; a method wrong anywhere is reported "
          "wrong, with the first wrong word and position, and no time. krc's useful GFLOP/s: 2 x "
          "the multiply-adds the nonzero weights need per word (heads' q, k, v, o, MLPs, "
          "unembedding per position; per key the head dimensions with nonzero q and k columns, "
          "and with nonzero v column and o row) over krc's median, against the peak: the best of "
          "7 dense float32 1024 x 1024 products (torch.matmul, numpy.matmul) at one thread, "
          "measured in the same process.\n"
          "A framework that cannot be imported (torch, onnxruntime) is named and its columns "
          "skipped. Exit status: 0 when krc ran and every method that ran was right, 1 when some "
          "method was wrong, 2 on bad input or when krc's package cannot be imported.\n"
          "The defaults (4 words of min(256, max_len) letters, 5 rounds) take seconds on the "
          "zoo's small networks; tools/README.md's table used --words 4 --length 1024 and "
          "--words 1 --length 4096.");
      sub.add_option("files", a->files, "weights files (.safetensors) from krc compile")
          ->required();
      sub.add_option("--words", a->words, "random words per file")
          ->check(CLI::Range(1, 10000))
          ->capture_default_str();
      sub.add_option("--length", a->length,
                     "letters per word (default: min(256, the file's max_len))")
          ->check(CLI::Range(1, 1 << 20));
      sub.add_option("--repetitions", a->repetitions,
                     "timed rounds; each runs every word through every method")
          ->check(CLI::Range(1, 10000))
          ->capture_default_str();
      sub.add_option("--seed", a->seed, "seed of the random words (Python's random.Random)")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
      sub.add_option("--script", a->script,
                     "path of tools/bench_frameworks.py (default: found beside the binary)");
      sub.add_option("--python", a->python,
                     "the Python with krc's package dependencies, torch and onnxruntime (default: "
                     "$KRC_VENV/bin/python, KRC_VENV defaulting to the repository's .venv, else "
                     "python3)");
      sub.add_flag("--json", a->json, "print the measurements as JSON");
      return [a] { return run_frameworks_bench(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
