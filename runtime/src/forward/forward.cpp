#include "krc/runtime/forward.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iterator>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "forward/float32_kernels.hpp"
#include "forward/forward_kernels.hpp"
#include "forward/narrow_forward.hpp"
#include "forward/prepared_network.hpp"
#include "krc/automata/interrupt.hpp"
#include "krc/automata/name_table.hpp"
#include "krc/runtime/network_memory.hpp"

namespace krc {

using namespace kernels;

namespace {
// One row per arithmetic, in enum order: its name (parsing, printing, the CLI's choices) and
// what it means, for reports.
struct ArithmeticName {
  Arithmetic arithmetic;
  const char* name;
  const char* meaning;
};
constexpr ArithmeticName kArithmeticNames[] = {
    {Arithmetic::Float32, "float32",
     "a plain float32 framework: float32 products and running sums"},
    {Arithmetic::Float64Accumulate, "float64-accumulate",
     "float32 activations, every sum in float64 rounded once"},
    {Arithmetic::Float64, "float64", "everything in float64"},
    {Arithmetic::BFloat16, "bf16",
     "a model cast to bfloat16: every tensor bf16, products summed in float32"},
    {Arithmetic::Float16, "fp16",
     "a model cast to float16: every tensor fp16, products summed in float32"},
};
static_assert(std::size(kArithmeticNames) == enum_count<Arithmetic>);
}  // namespace

const char* to_string(Arithmetic arithmetic) {
  return kArithmeticNames[static_cast<int>(arithmetic)].name;
}

Arithmetic arithmetic_from_string(const std::string& s) {
  std::string names;
  for (const ArithmeticName& a : kArithmeticNames) {
    if (s == a.name) return a.arithmetic;
    names += std::string(names.empty() ? "" : ", ") + a.name;
  }
  throw std::invalid_argument("unknown arithmetic '" + s + "' (" + names + ")");
}

std::vector<std::string> arithmetic_names() {
  std::vector<std::string> names;
  for (const ArithmeticName& a : kArithmeticNames) names.push_back(a.name);
  return names;
}

const char* describe(Arithmetic arithmetic) {
  return kArithmeticNames[static_cast<int>(arithmetic)].meaning;
}

namespace {

void check_word(const Network& network, const std::vector<LetterId>& word) {
  if (static_cast<long long>(word.size()) > network.max_len)
    throw std::invalid_argument("a word of length " + std::to_string(word.size()) +
                                " is longer than the network's max_len " +
                                std::to_string(network.max_len));
  const std::size_t letters = network.vocabulary.size() - 1;
  for (LetterId a : word)
    if (a >= letters)
      throw std::invalid_argument("letter id " + std::to_string(a) +
                                  " is outside the vocabulary (" + std::to_string(letters) +
                                  " letters)");
}

// One thread's buffers, reused from word to word. Consecutive words often share a prefix
// (exhaustive verification enumerates words in lexicographic order); by causality those
// positions compute exactly what they computed before, so only the rows after the shared
// prefix are run: every row's arithmetic depends on its own word's rows <= it alone, never on
// how rows are grouped, so the logits are bitwise those of a fresh run.
template <typename Act>
class WordRunner {
 public:
  WordRunner(const Network& network, const PreparedNetwork& prepared, const ForwardOptions& options)
      : network_(network),
        prepared_(prepared),
        options_(options),
        layers_(layers_for(options.arithmetic)),
        layer_states_(prepared.layers.size()),
        float32_states_(prepared.layers.size()) {}

  // 1. the rows after the prefix shared with the last word; 2. their embeddings; 3. the layers
  // and the unembedding, in the kernels of the arithmetic (chosen once, in the constructor).
  const DoubleRows& run(const std::vector<LetterId>& word) {
    const int n = static_cast<int>(word.size()) + 1;
    const int from = first_new_row(word);
    last_word_.reset();  // the state is not a whole word's until this run completes
    embed(word, from);
    logits_.conservativeResize(n, prepared_.unembedding.cols);
    (this->*layers_)(from, n);
    last_word_ = word;
    return logits_;
  }

 private:
  using Layers = void (WordRunner::*)(int from, int n);

  // Arithmetic::Float32 has kernels of its own (float32 sums); every other arithmetic runs the
  // double-sum kernels, rounding activations to Act.
  static Layers layers_for(Arithmetic arithmetic) {
    if constexpr (std::is_same_v<Act, float>)
      if (arithmetic == Arithmetic::Float32) return &WordRunner::run_float32;
    return &WordRunner::run_double_sums;
  }

  int first_new_row(const std::vector<LetterId>& word) const;
  void embed(const std::vector<LetterId>& word, int from);
  void run_double_sums(int from, int n);
  void run_float32(int from, int n) requires std::is_same_v<Act, float>;

  const Network& network_;
  const PreparedNetwork& prepared_;
  const ForwardOptions& options_;
  const Layers layers_;
  Activations<Act> x_;
  std::vector<LayerAttentionState> layer_states_;
  AttentionScratch attention_;
  MlpScratch mlp_;
  std::vector<f32::LayerState> float32_states_;
  f32::Scratch float32_attention_;
  f32::MlpScratch float32_mlp_;
  DoubleRows logits_;
  std::optional<std::vector<LetterId>> last_word_;
};

template <typename Act>
int WordRunner<Act>::first_new_row(const std::vector<LetterId>& word) const {
  if (!last_word_) return 0;
  std::size_t shared = 0;
  while (shared < word.size() && shared < last_word_->size() &&
         word[shared] == (*last_word_)[shared])
    ++shared;
  return static_cast<int>(shared) + 1;
}

// Rows [from, n) of x: token plus position embedding, summed in double, stored as Act.
template <typename Act>
void WordRunner<Act>::embed(const std::vector<LetterId>& word, int from) {
  const int n = static_cast<int>(word.size()) + 1, d = prepared_.d_model;
  if (x_.rows() != n) x_.resize(n, d);  // rows before `from` are not read again
  for (int t = from; t < n; ++t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    for (int c = 0; c < d; ++c)
      x_(t, c) = static_cast<Act>(static_cast<double>(network_.token_embedding(token, c)) +
                                  static_cast<double>(network_.position_embedding(t, c)));
  }
}

// The layers and the unembedding of rows [from, n), sums in double.
template <typename Act>
void WordRunner<Act>::run_double_sums(int from, int n) {
  for (std::size_t l = 0; l < prepared_.layers.size(); ++l) {
    interruption_point();  // a layer of one word since the last
    const PreparedLayer& layer = prepared_.layers[l];
    // Every head reads the same x; their outputs are summed, then added once.
    if (!layer.heads.empty())
      apply_attention(layer, prepared_.scale, options_, x_, from, n, layer_states_[l], attention_);
    if (layer.mlp) apply_mlp(*layer.mlp, x_, from, n, mlp_);
  }
  const ScatterRows& u = prepared_.unembedding;
  for (int t = from; t < n; ++t) {
    double* row = logits_.row(t).data();
    std::fill(row, row + u.cols, 0.0);
    for (int c = 0; c < prepared_.d_model; ++c) {
      const double xv = x_(t, c);
      if (xv == 0.0) continue;
      for (int e = u.begin(c); e < u.end(c); ++e) row[u.column[e]] += xv * u.value[e];
    }
    for (int s = 0; s < u.cols; ++s) row[s] = static_cast<double>(static_cast<Act>(row[s]));
  }
}

// The layers and the unembedding of rows [from, n) in Arithmetic::Float32.
template <typename Act>
void WordRunner<Act>::run_float32(int from, int n) requires std::is_same_v<Act, float> {
  for (std::size_t l = 0; l < prepared_.layers.size(); ++l) {
    interruption_point();  // a layer of one word since the last
    const PreparedLayer& layer = prepared_.layers[l];
    if (!layer.heads.empty())
      f32::apply_attention(layer, static_cast<float>(prepared_.scale), options_, x_, from, n,
                           float32_states_[l], float32_attention_);
    if (layer.mlp) f32::apply_mlp(*layer.mlp, x_, from, n, float32_mlp_);
  }
  f32::unembed(prepared_.unembedding, x_, from, n, logits_);
}

// Runs `body(runner, i)` for i in [0, count) on `threads` threads, each with its own runner.
// Threads take runs of consecutive words, so that a runner sees the prefixes they share.
template <typename Act, typename Body>
void run_parallel(const Network& network, const PreparedNetwork& prepared,
                  const ForwardOptions& options, std::size_t count, Body body) {
  std::size_t threads = options.threads > 0 ? static_cast<std::size_t>(options.threads)
                                            : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, count);
  const std::size_t chunk =
      std::max<std::size_t>(1, count / (4 * std::max<std::size_t>(1, threads)));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      WordRunner<Act> runner(network, prepared, options);
      for (std::size_t first = next.fetch_add(chunk); first < count; first = next.fetch_add(chunk))
        for (std::size_t i = first; i < std::min(count, first + chunk); ++i) {
          interruption_point();
          body(runner, i);
        }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& thread : pool) thread.join();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

ForwardPass::ForwardPass(const Network& network, ForwardOptions options)
    : network_(network), options_(options) {
  network.check_shapes();
  check_prepare_memory(network);
  prepared_ = std::make_unique<PreparedNetwork>(network);
  // Both bound what the copies hold (tests/runtime/network_memory_test.cpp checks each); the
  // count is the tighter one on large networks, the model on tiny ones (a header per vector).
  prepared_bytes_ = std::min(prepared_->bytes(), krc::prepared_bytes(shape_of(network)));
  if (narrow::is_narrow(options_.arithmetic))
    narrow_ = std::make_unique<narrow::Forward>(network, options_.arithmetic, options_.attention);
}

ForwardPass::~ForwardPass() = default;

Eigen::MatrixXd ForwardPass::run(const std::vector<LetterId>& word) const {
  check_word(network_, word);
  check_forward_memory(network_, 1, 1, static_cast<std::int64_t>(word.size()), word.size() + 1,
                       prepared_bytes_);
  if (narrow_) return narrow_->run(word);
  if (options_.arithmetic != Arithmetic::Float64)
    return Eigen::MatrixXd(WordRunner<float>(network_, *prepared_, options_).run(word));
  return Eigen::MatrixXd(WordRunner<double>(network_, *prepared_, options_).run(word));
}

std::vector<Eigen::MatrixXd> ForwardPass::run(
    const std::vector<std::vector<LetterId>>& words) const {
  std::size_t longest = 0, rows = 0;
  for (const auto& w : words) {
    check_word(network_, w);
    longest = std::max(longest, w.size());
    rows += w.size() + 1;
  }
  const std::size_t threads = options_.threads > 0 ? static_cast<std::size_t>(options_.threads)
                                                   : std::thread::hardware_concurrency();
  check_forward_memory(network_, words.size(),
                       std::max<std::size_t>(1, std::min(threads, words.size())),
                       static_cast<std::int64_t>(longest), rows, prepared_bytes_);
  std::vector<Eigen::MatrixXd> logits(words.size());
  auto body = [&](auto& runner, std::size_t i) { logits[i] = runner.run(words[i]); };
  if (narrow_)  // the runner (and its reuse of shared prefixes) is not used: dense rows
    run_parallel<float>(network_, *prepared_, options_, words.size(),
                        [&](auto&, std::size_t i) { logits[i] = narrow_->run(words[i]); });
  else if (options_.arithmetic != Arithmetic::Float64)
    run_parallel<float>(network_, *prepared_, options_, words.size(), body);
  else
    run_parallel<double>(network_, *prepared_, options_, words.size(), body);
  return logits;
}

std::vector<Eigen::MatrixXf> forward_logits(const Network& network,
                                            const std::vector<std::vector<LetterId>>& words,
                                            const ForwardOptions& options) {
  std::vector<Eigen::MatrixXf> out;
  for (const auto& l : ForwardPass(network, options).run(words)) out.push_back(l.cast<float>());
  return out;
}

std::vector<std::vector<StateId>> predict_states(const Network& network,
                                                 const std::vector<std::vector<LetterId>>& words,
                                                 const ForwardOptions& options) {
  std::vector<std::vector<StateId>> out;
  for (const auto& l : ForwardPass(network, options).run(words)) {
    std::vector<StateId> states(l.rows());
    for (Eigen::Index t = 0; t < l.rows(); ++t) {
      Eigen::Index best;
      l.row(t).maxCoeff(&best);
      states[t] = static_cast<StateId>(best);
    }
    out.push_back(std::move(states));
  }
  return out;
}

}  // namespace krc
