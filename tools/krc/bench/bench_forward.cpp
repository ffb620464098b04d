// `krc bench forward`: times the forward pass on a synthetic network shaped like a compiled
// parallel-prefix network: 13 layers, d_model ~450, one lookup head per layer (±1 position
// codes, head_dim 13, one-hot values of width 120) and an MLP of 14,400 pair units per layer
// (ReLU(f_a + s_b - 1), 2 inputs and 3 outputs each), on 100 random words of length 4096.
// --file times a compiled network instead. The last column is the estimate of CPU ms per word
// that krc verify's default budget uses (verify_budget.cpp), for comparison.
#include <chrono>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>
#include <random>
#include <thread>

#include "bench_suite.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/integer_math.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/network.hpp"
#include "krc/runtime/verifier.hpp"
#include "krc/runtime/weights_file.hpp"
#include "option_checks.hpp"

namespace krc::cli {

namespace {

struct ForwardBenchOptions {
  int layers = 13, words = 100, length = 4096, elements = 120, letters = 5, threads = 0;
  bool quick = false;                 // one configuration only (the default arithmetic, softmax)
  std::string file;                   // time this weights file instead of the synthetic network
  std::string attention, arithmetic;  // one configuration only: this one
  int key_tree_from_row = ForwardOptions{}.key_tree_from_row;
  bool length_given = false;
};

// Residual layout: [bits(t) | bits(t-1) | tokens | S (state one-hot) | F (fetched one-hot) |
// spare].
struct ScanLayout {
  int bits, e, vocabulary, pos, prev, token, S, F, d;
};

ScanLayout scan_layout(const ForwardBenchOptions& o) {
  const int bits = std::max(1, ceil_log2(o.length + 1)), e = o.elements, vocabulary = o.letters + 1;
  const int pos = 0, prev = bits, token = 2 * bits, S = token + vocabulary, F = S + e;
  const int d =
      std::max(F + e, 450);  // spare dimensions, like the other blocks of a compiled layout
  return {bits, e, vocabulary, pos, prev, token, S, F, d};
}

// The head of every layer: position t attends to t-1 by its ±1 position codes and copies the
// state one-hot S there into F.
AttentionHead fetch_previous_state(const ScanLayout& L) {
  AttentionHead head;
  head.name = "fetch the state at t-1";
  head.query = SparseMatrix(L.d, L.bits);
  head.key = SparseMatrix(L.d, L.bits);
  for (int b = 0; b < L.bits; ++b) {
    head.query.insert(L.prev + b, b) = 1;
    head.key.insert(L.pos + b, b) = 1;
  }
  head.value = SparseMatrix(L.d, L.e);
  head.output = SparseMatrix(L.e, L.d);
  for (int s = 0; s < L.e; ++s) {
    head.value.insert(L.S + s, s) = 1;
    head.output.insert(s, L.F + s) = 1;
  }
  return head;
}

// The MLP of every layer: one unit per pair (a, b) of fetched and own element, composing them
// by `table`.
Mlp compose_pairs(const ScanLayout& L, const std::vector<int>& table) {
  const int e = L.e, S = L.S, F = L.F, d = L.d;
  Mlp mlp;
  const int hidden = e * e;
  std::vector<Eigen::Triplet<float, int>> in, out;
  for (int a = 0; a < e; ++a)
    for (int b = 0; b < e; ++b) {
      const int u = a * e + b;
      in.emplace_back(u, F + a, 1.0f);
      in.emplace_back(u, S + b, 1.0f);
      // In place: S becomes one-hot(a*b), F is cleared for the next layer.
      out.emplace_back(S + table[u], u, 1.0f);
      out.emplace_back(S + b, u, -1.0f);
      out.emplace_back(F + a, u, -1.0f);
    }
  mlp.in_weight = SparseMatrix(hidden, d);
  mlp.in_weight.setFromTriplets(in.begin(), in.end());
  mlp.out_weight = SparseMatrix(d, hidden);
  mlp.out_weight.setFromTriplets(out.begin(), out.end());  // duplicates (a*b == b) are summed
  mlp.in_bias = Eigen::VectorXf::Constant(hidden, -1.0f);
  mlp.out_bias = Eigen::VectorXf::Zero(d);
  mlp.blocks = {{"pair products", 0, hidden, {}}};
  return mlp;
}

Network synthetic_scan_network(const ForwardBenchOptions& o) {
  std::mt19937_64 rng(2024);
  const ScanLayout L = scan_layout(o);
  const int bits = L.bits, e = L.e, vocabulary = L.vocabulary, d = L.d;
  Network n;
  n.max_len = o.length;
  n.vocabulary.push_back("<bos>");
  for (int a = 0; a < o.letters; ++a) n.vocabulary.push_back("l" + std::to_string(a));
  for (int s = 0; s < e; ++s) n.states.push_back("e" + std::to_string(s));
  for (int c = 0; c < d; ++c) n.residual_labels.push_back("dim " + std::to_string(c));
  n.attention_scale = 20.0f;  // gap 2 between the target and the nearest code: 40 in the exponent

  n.token_embedding = RowMatrix::Zero(vocabulary, d);
  std::uniform_int_distribution<int> element(0, e - 1);
  for (int t = 0; t < vocabulary; ++t) {
    n.token_embedding(t, L.token + t) = 1;
    n.token_embedding(t, L.S + (t == 0 ? 0 : element(rng))) = 1;  // BOS: the identity element 0
  }
  n.position_embedding = RowMatrix::Zero(o.length + 1, d);
  for (int t = 0; t <= o.length; ++t)
    for (int b = 0; b < bits; ++b) {
      n.position_embedding(t, L.pos + b) = ((t >> b) & 1) ? 1.0f : -1.0f;
      n.position_embedding(t, L.prev + b) = (((t > 0 ? t - 1 : 0) >> b) & 1) ? 1.0f : -1.0f;
    }
  n.unembedding = SparseMatrix(d, e);
  for (int s = 0; s < e; ++s) n.unembedding.insert(L.S + s, s) = 1;

  // Drawn after the embedding's elements, from the same generator: the order fixes the network.
  std::vector<int> table(e * e);
  for (auto& m : table) m = element(rng);
  for (int l = 0; l < o.layers; ++l) {
    Layer layer;
    layer.purpose = "synthetic scan step " + std::to_string(l);
    layer.heads.push_back(fetch_previous_state(L));
    layer.mlp = compose_pairs(L, table);
    n.layers.push_back(std::move(layer));
  }
  return n;
}

// The network to time (`o.file`'s, or the synthetic one), after printing which it is; `run`
// gets the letters and length of a file's network.
Network bench_network(const ForwardBenchOptions& o, ForwardBenchOptions& run) {
  if (o.file.empty()) {
    Network network = synthetic_scan_network(o);
    std::cout << "synthetic network: ";
    return network;
  }
  Network network = load_network(o.file);
  run.letters = static_cast<int>(network.vocabulary.size()) - 1;
  if (run.letters == 0)  // no random word to draw: the only word is the empty one
    throw InputError(o.file, "",
                     empty_alphabet_clause() + ", so there are no random words to time");
  if (!o.length_given) run.length = network.max_len;
  if (run.length > network.max_len)
    throw InputError(o.file, "--length",
                     "longer than the network's max_len " + std::to_string(network.max_len));
  std::cout << o.file << ": ";
  return network;
}

struct BenchConfig {
  AttentionKind attention;
  Arithmetic arithmetic;
};

// The configurations timed: the one asked for, the default one (--quick), or four.
std::vector<BenchConfig> bench_configs(const ForwardBenchOptions& o) {
  if (!o.attention.empty() || !o.arithmetic.empty())
    return {{o.attention.empty() ? AttentionKind::Softmax : attention_kind_from_string(o.attention),
             o.arithmetic.empty() ? kDefaultArithmetic : arithmetic_from_string(o.arithmetic)}};
  if (o.quick) return {{AttentionKind::Softmax, kDefaultArithmetic}};
  return {{AttentionKind::Softmax, Arithmetic::Float64Accumulate},
          {AttentionKind::Hard, Arithmetic::Float64Accumulate},
          {AttentionKind::Softmax, Arithmetic::Float64},
          {AttentionKind::Softmax, Arithmetic::Float32}};
}

int run_forward_bench(const ForwardBenchOptions& o) {
  using Clock = std::chrono::steady_clock;
  ForwardBenchOptions run = o;
  const Network network = bench_network(o, run);
  const auto size = network.size();
  long long hidden = 0;
  for (int h : size.mlp_hidden) hidden += h;
  std::cout << size.layers << " layers, d_model " << size.d_model << ", " << size.heads
            << " heads, " << hidden << " MLP hidden units in all, " << size.nonzeros
            << " nonzero weights of " << size.parameters << "; " << run.words
            << " random words of length " << run.length << "\n";
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(run.letters - 1));
  std::vector<std::vector<LetterId>> words(run.words, std::vector<LetterId>(run.length));
  for (auto& w : words)
    for (auto& a : w) a = letter(rng);

  std::cout << std::left << std::setw(10) << "attention" << std::setw(20) << "arithmetic"
            << std::right << std::setw(9) << "threads" << std::setw(12) << "seconds"
            << std::setw(14) << "cpu seconds" << std::setw(16) << "positions/s" << std::setw(16)
            << "cpu ms/word" << std::setw(15) << "estimated\n";
  for (const auto& c : bench_configs(o)) {
    ForwardOptions options{c.attention, c.arithmetic, o.threads};
    options.key_tree_from_row = o.key_tree_from_row;
    ForwardPass pass(network, options);
    const auto start = Clock::now();
    const std::clock_t cpu_start = std::clock();
    const auto logits = pass.run(words);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    // CPU time of all threads: the figure that does not depend on what else the machine runs.
    const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    // The network composes random table entries; its argmax at least must be a real state.
    if (logits.size() != words.size()) return 1;
    const int threads =
        o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
    const double positions = static_cast<double>(run.words) * (run.length + 1);
    std::cout << std::left << std::setw(10) << to_string(c.attention) << std::setw(20)
              << to_string(c.arithmetic) << std::right << std::setw(9) << threads << std::setw(12)
              << std::fixed << std::setprecision(2) << seconds << std::setw(14) << cpu
              << std::setw(16) << std::setprecision(0) << positions / seconds << std::setw(15)
              << std::setprecision(1) << 1000.0 * cpu / run.words << std::setw(14)
              << 1000.0 * estimated_cpu_seconds_per_word(pass, run.length) << "\n";
  }
  return 0;
}

const RegisterBenchSuite forward_suite{BenchSuite{
    "forward", "forward pass on a synthetic 13-layer scan-shaped network, 100 words of length 4096",
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<ForwardBenchOptions>();
      sub.add_option("--layers", o->layers, "layers (default 13)")->check(integer_in(1, 1000));
      sub.add_option("--words", o->words, "words (default 100)")->check(integer_in(1, 1'000'000));
      sub.add_option("--length", o->length, "word length (default 4096; with --file, max_len)")
          ->check(CLI::Range(0, 1 << 20))
          ->each([o](const std::string&) { o->length_given = true; });
      sub.add_option("--file", o->file, "time this weights file instead of the synthetic network");
      sub.add_option("--elements", o->elements, "one-hot width of the scanned values (default 120)")
          ->check(CLI::Range(1, 1000));
      sub.add_option("--threads", o->threads, "threads (default: one per core)")
          ->check(integer_in(0, 1024));
      sub.add_flag("--quick", o->quick, "softmax in the default arithmetic only");
      sub.add_option("--attention", o->attention, "only this attention: softmax, hard or hardmax")
          ->check(CLI::IsMember(attention_kind_names()));
      sub.add_option("--arithmetic", o->arithmetic,
                     "only this arithmetic: float32, float64-accumulate, float64, bf16 or fp16")
          ->check(CLI::IsMember(arithmetic_names()));
      sub.add_option("--key-tree-from", o->key_tree_from_row,
                     "rows of select heads from this one on use bounds on blocks of keys "
                     "(default 1024; the results are the same; a value past the length scores "
                     "every key, as before the tree)")
          ->check(CLI::NonNegativeNumber);
      return [o] { return run_forward_bench(*o); };
    }}};

}  // namespace
}  // namespace krc::cli
