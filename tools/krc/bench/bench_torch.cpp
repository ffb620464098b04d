// `krc bench torch FILE... [--words K] [--length N] [--threads T] [--sparse-mlp] [--json]`:
// krc's forward pass against the PyTorch module (tools/krc_torch.py, in the project's venv Python)
// on the same files and the same words, side by side: wall and CPU seconds of each, their
// ratio, and whether the two agree on the state at every position. Loading is not timed.
//
// Threads: krc runs words in parallel (ForwardOptions::threads), torch parallelises inside each
// operation (torch.set_num_threads); --threads sets both (default 1: the CPU each needs).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

#include "bench_suite.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/network_summary.hpp"
#include "krc/runtime/weights_file.hpp"
#include "python_script.hpp"

namespace krc::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TorchBenchArguments {
  std::vector<std::string> files;
  int words = 4, length = 0, threads = 1;
  std::string script, python;  // python: empty means find_python's choice
  bool sparse_mlp = false, json = false;
};

struct Timing {
  double seconds = 0, cpu_seconds = 0;
  int threads = 0;
  std::vector<std::vector<int>> states;  // per word, the argmax state after every prefix
};

Timing time_krc(const Network& network, const std::vector<std::vector<LetterId>>& words,
                int threads) {
  ForwardPass pass(network, {network.attention, kDefaultArithmetic, threads});
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu = std::clock();
  const auto logits = pass.run(words);
  Timing t;
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.cpu_seconds = static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
  t.threads = threads;
  for (const auto& l : logits) {
    std::vector<int> states;
    for (Eigen::Index r = 0; r < l.rows(); ++r) {
      Eigen::Index best = 0;
      l.row(r).maxCoeff(&best);
      states.push_back(static_cast<int>(best));
    }
    t.states.push_back(std::move(states));
  }
  return t;
}

// Runs the module's --bench mode on the words (one per line on stdin) and reads its JSON.
Timing time_torch(const TorchBenchArguments& a, const fs::path& script, const std::string& file,
                  const Network& network, const std::vector<std::vector<LetterId>>& words) {
  char dir_template[] = "/tmp/krc-bench-torch-XXXXXX";
  if (!mkdtemp(dir_template)) throw std::runtime_error("mkdtemp failed");
  const fs::path dir = dir_template;
  {
    std::ofstream in(dir / "words.txt");
    for (const auto& w : words) {
      for (std::size_t i = 0; i < w.size(); ++i)
        in << (i ? "\t" : "") << network.vocabulary[w[i] + 1];  // letters may hold spaces
      in << "\n";
    }
  }
  std::string command =
      shell_quote(a.python) + " " + shell_quote(script.string()) + " " + shell_quote(file) +
      " --bench --threads " + std::to_string(a.threads) + (a.sparse_mlp ? " --sparse-mlp" : "") +
      " <" + shell_quote((dir / "words.txt").string()) + " >" +
      shell_quote((dir / "out.json").string()) + " 2>" + shell_quote((dir / "err.txt").string());
  const int raw = std::system(command.c_str());
  std::ifstream out(dir / "out.json"), err(dir / "err.txt");
  std::stringstream out_text, err_text;
  out_text << out.rdbuf();
  err_text << err.rdbuf();
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  if (!WIFEXITED(raw) || WEXITSTATUS(raw) != 0)
    throw InputError(script.string(), "", "the PyTorch module failed: " + err_text.str());
  const json j = json::parse(out_text.str());
  Timing t;
  t.seconds = j.at("seconds");
  t.cpu_seconds = j.at("cpu_seconds");
  t.threads = j.at("threads");
  t.states = j.at("states").get<std::vector<std::vector<int>>>();
  return t;
}

// torch / krc; null when krc's time is below the clock's resolution.
json ratio(double torch, double krc) { return krc > 0 ? json(torch / krc) : json(nullptr); }

long long agreeing_positions(const Timing& x, const Timing& y) {
  long long same = 0;
  for (std::size_t w = 0; w < x.states.size() && w < y.states.size(); ++w)
    for (std::size_t t = 0; t < x.states[w].size() && t < y.states[w].size(); ++t)
      same += x.states[w][t] == y.states[w][t];
  return same;
}

json bench_file(const TorchBenchArguments& a, const fs::path& script, const std::string& file) {
  const Network network = load_network(file);
  const int length = a.length > 0 ? a.length : network.max_len;
  if (length > network.max_len)
    throw InputError(file, "--length",
                     "longer than the network's max_len " + std::to_string(network.max_len));
  if (network.vocabulary.size() < 2)  // <bos> alone: no random word to draw
    throw InputError(file, "", empty_alphabet_clause() + ", so there are no random words to time");
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<LetterId> letter(
      0, static_cast<LetterId>(network.vocabulary.size() - 2));
  std::vector<std::vector<LetterId>> words(a.words, std::vector<LetterId>(length));
  for (auto& w : words)
    for (auto& l : w) l = letter(rng);
  const Timing krc = time_krc(network, words, a.threads);
  const Timing torch = time_torch(a, script, file, network, words);
  const auto size = network.size();
  long long hidden = 0;
  for (int h : size.mlp_hidden) hidden += h;
  return {{"file", file},
          {"layers", size.layers},
          {"d_model", size.d_model},
          {"heads", size.heads},
          {"mlp_hidden", hidden},
          {"words", a.words},
          {"length", length},
          {"attention", to_string(network.attention)},
          {"krc",
           {{"seconds", krc.seconds},
            {"cpu_seconds", krc.cpu_seconds},
            {"threads", krc.threads},
            {"precision", "float32 (float64 sums)"}}},
          {"torch",
           {{"seconds", torch.seconds},
            {"cpu_seconds", torch.cpu_seconds},
            {"threads", torch.threads},
            {"sparse_mlp", a.sparse_mlp},
            {"precision", "float32"}}},
          {"ratio_wall", ratio(torch.seconds, krc.seconds)},
          {"ratio_cpu", ratio(torch.cpu_seconds, krc.cpu_seconds)},
          {"positions", static_cast<long long>(a.words) * (length + 1)},
          {"agreeing_positions", agreeing_positions(krc, torch)}};
}

void print_row(const json& r) {
  std::printf("%-34s %6d %7d %5d %9lld %6d x %-6d %9.3f %9.3f %9.2f %9.2f %8.0fx %8.0fx %s\n",
              fs::path(r["file"].get<std::string>()).filename().string().c_str(),
              r["layers"].get<int>(), r["d_model"].get<int>(), r["heads"].get<int>(),
              r["mlp_hidden"].get<long long>(), r["words"].get<int>(), r["length"].get<int>(),
              r["krc"]["seconds"].get<double>(), r["krc"]["cpu_seconds"].get<double>(),
              r["torch"]["seconds"].get<double>(), r["torch"]["cpu_seconds"].get<double>(),
              r["ratio_wall"].is_null() ? 0.0 : r["ratio_wall"].get<double>(),
              r["ratio_cpu"].is_null() ? 0.0 : r["ratio_cpu"].get<double>(),
              r["agreeing_positions"] == r["positions"] ? "all" : "SOME DIFFER");
  std::fflush(stdout);
}

int run_torch_bench(TorchBenchArguments a) {
  const fs::path script = find_tool_script(a.script, "krc_torch.py");
  a.python = find_python(a.python, script);
  if (std::system(
          (shell_quote(a.python) + " -c 'import torch, safetensors' >/dev/null 2>&1").c_str()) !=
      0) {
    std::cerr << "krc: error: bench torch: " << a.python
              << " cannot import torch and safetensors (run tools/setup.sh to make .venv, or "
                 "give --python or KRC_VENV)\n";
    return 2;
  }
  json rows = json::array();
  if (!a.json)
    std::printf("%-34s %6s %7s %5s %9s %15s %9s %9s %9s %9s %9s %9s %s\n", "file", "layers",
                "d_model", "heads", "hidden", "words x length", "krc s", "krc cpu", "torch s",
                "torch cpu", "torch/krc", "(cpu)", "states agree");
  for (const auto& file : a.files) {
    rows.push_back(bench_file(a, script, file));
    if (!a.json) print_row(rows.back());
  }
  if (a.json) {
    std::cout << rows.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::printf(
      "\nkrc: ForwardPass, arithmetic %s (%s), words in parallel on %d "
      "thread(s).\ntorch: tools/krc_torch.py, plain float32, one batched forward pass, %d "
      "intra-op thread(s)%s.\nLoading is not timed; the ratio is torch time / krc time.\n",
      to_string(kDefaultArithmetic), describe(kDefaultArithmetic), a.threads, a.threads,
      a.sparse_mlp ? ", sparse MLPs" : ", dense MLPs");
  return 0;
}

const RegisterBenchSuite torch_suite{BenchSuite{
    "torch", "krc's forward pass vs the PyTorch module (tools/krc_torch.py) on the same words",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<TorchBenchArguments>();
      sub.add_option("files", a->files, "weights files (.safetensors)")->required();
      sub.add_option("--words", a->words, "random words per file")
          ->check(CLI::Range(1, 10000))
          ->capture_default_str();
      sub.add_option("--length", a->length, "word length (default: the file's max_len)")
          ->check(CLI::Range(0, 1 << 20));
      sub.add_option("--threads", a->threads,
                     "threads for each: krc's words in parallel, torch's intra-op threads")
          ->check(CLI::Range(1, 1024))
          ->capture_default_str();
      sub.add_flag("--sparse-mlp", a->sparse_mlp,
                   "run the module's MLPs through sparse weights (krc_torch.py --sparse-mlp)");
      sub.add_option("--script", a->script, "path of tools/krc_torch.py (default: found)");
      sub.add_option("--python", a->python,
                     "the Python with torch (default: $KRC_VENV/bin/python, KRC_VENV defaulting to "
                     "the repository's .venv, else python3)");
      sub.add_flag("--json", a->json, "print the measurements as JSON");
      return [a] { return run_torch_bench(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
