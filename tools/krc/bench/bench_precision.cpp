// `krc bench precision [--max-len N ...] [--strategy S ...] [--arithmetic A ...] [--words K]
// [--automata DIR | --zoo FAMILY --n N ...] [--seed S] [--fp32-only] [--json]`: where each
// network stops being right in each arithmetic. For every automaton (by default the zoo),
// strategy and max_len it compiles the network for fp32 (`krc compile`'s default), runs K random
// words of max_len letters in each arithmetic (by default bf16, fp16 and float32, runtime README
// "bf16 and fp16") and prints the first position where the network's state differs from the
// automaton's (the smallest over the words; "-" when every position is right), beside the
// network's layers and parameters. For each narrow arithmetic (bf16, fp16) it also compiles the
// network with `--precision` of that format (same strategy and max_len) and runs the same words
// in that arithmetic, or says why the compiler refuses the strategy there (compiler/README.md
// "bf16 and fp16"): the fp32-compiled and the format-compiled networks side by side.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_automata.hpp"
#include "bench_suite.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "option_checks.hpp"
#include "text_table.hpp"

namespace krc::cli {

namespace {

using nlohmann::json;
using Words = std::vector<std::vector<LetterId>>;

struct PrecisionBenchArguments {
  std::vector<int> max_lens{1024, 4096, 16384};
  std::vector<std::string> strategies{"scan", "kr"};
  std::vector<std::string> arithmetics{"bf16", "fp16", "float32"};
  std::string automata, family;
  std::vector<int> sizes;
  int words = 1, threads = 0;
  unsigned long long seed = 1;
  bool fp32_only = false;  // no format-compiled networks (half the runs of the scan rows)
  bool json = false;
};

// The first position t where state `expected[t]`'s logit is not strictly above every other
// (a tie or a NaN is wrong), or -1 when there is none.
long long first_wrong(const Eigen::MatrixXd& logits, const std::vector<StateId>& expected) {
  for (Eigen::Index t = 0; t < logits.rows(); ++t) {
    const double right = logits(t, expected[t]);
    for (Eigen::Index s = 0; s < logits.cols(); ++s)
      if (s != static_cast<Eigen::Index>(expected[t]) && !(right > logits(t, s))) return t;
  }
  return -1;
}

// The smallest first wrong position over `words` when `network` runs in `arithmetic` (null:
// every position of every word is right).
json first_wrong_over(const Network& network, const Automaton& a, const Words& words,
                      const std::string& arithmetic, int threads) {
  ForwardPass pass(network, {AttentionKind::Softmax, arithmetic_from_string(arithmetic), threads});
  const auto logits = pass.run(words);
  long long first = -1;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const long long f = first_wrong(logits[w], a.run(words[w]));
    if (f >= 0 && (first < 0 || f < first)) first = f;
  }
  return first < 0 ? json(nullptr) : json(first);
}

Words random_words(const Automaton& a, int max_len, const PrecisionBenchArguments& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(a.letter_count() - 1));
  Words words(o.words, std::vector<LetterId>(max_len));
  for (auto& w : words)
    for (auto& l : w) l = letter(rng);
  return words;
}

// Layers and parameters into `into`, and a scan's form (one-hot or integer: what decides
// whether it is exact in a narrow format).
void describe_network(const CompileResult& result, json& into) {
  const NetworkSize size = result.network.size();
  into["layers"] = size.layers;
  into["parameters"] = size.parameters;
  if (result.strategy == Strategy::Scan && result.scan) into["form"] = to_string(result.scan->form);
}

// The narrow format whose models run in `arithmetic` (bf16, fp16), if any.
std::optional<Precision> narrow_format(const std::string& arithmetic) {
  const Arithmetic wanted = arithmetic_from_string(arithmetic);
  for (const std::string& name : precision_names()) {
    const Precision p = precision_from_string(name);
    if (p != Precision::Float32 && arithmetic_of(p) == wanted) return p;
  }
  return std::nullopt;
}

// The network compiled for `format` (options' strategy and max_len), run on the same words in
// the format's arithmetic: its size and first wrong position; or the compiler's refusal of the
// strategy in that format ("refused"); or why it could not be built ("error").
// The network, or nothing with the reason in cell["error"] (a row that could not be built).
std::optional<CompileResult> compiled(const Automaton& a, const CompileOptions& options,
                                      json& cell) {
  try {
    return compile(a, options);
  } catch (const std::exception& e) {
    cell["error"] = e.what();
    return std::nullopt;
  }
}

json format_compiled(const Automaton& a, CompileOptions options, Precision format,
                     const std::string& arithmetic, const Words& words, int threads) {
  options.precision = format;
  json cell{{"precision", to_string(format)}};
  try {
    check_precision(options.strategy, options);
  } catch (const LimitError& e) {
    cell["refused"] = e.what();
    return cell;
  }
  const std::optional<CompileResult> result = compiled(a, options, cell);
  if (!result) return cell;
  describe_network(*result, cell);
  cell["first_wrong"] = first_wrong_over(result->network, a, words, arithmetic, threads);
  return cell;
}

// One network's row: its size and, per arithmetic, the first wrong position (null: none); per
// narrow arithmetic, the network compiled for that format beside it ("format_compiled").
json measure(const Automaton& a, Strategy strategy, int max_len, const PrecisionBenchArguments& o) {
  json row{{"automaton", a.name()}, {"strategy", to_string(strategy)}, {"max_len", max_len}};
  if (a.letter_count() == 0) {  // no word of length > 0 to stop being right on
    row["skipped"] = empty_alphabet_clause();
    return row;
  }
  CompileOptions options;
  options.strategy = strategy;
  options.max_len = max_len;
  const Words words = random_words(a, max_len, o);
  {  // scoped: the fp32 network is freed before the format-compiled ones are built
    const std::optional<CompileResult> result = compiled(a, options, row);
    if (!result) return row;
    describe_network(*result, row);
    for (const std::string& name : o.arithmetics)
      row["first_wrong"][name] = first_wrong_over(result->network, a, words, name, o.threads);
  }
  if (o.fp32_only) return row;
  for (const std::string& name : o.arithmetics)
    if (const std::optional<Precision> format = narrow_format(name))
      row["format_compiled"][name] = format_compiled(a, options, *format, name, words, o.threads);
  return row;
}

// The compiler's refusal in a few words, for a table cell: its first clause without the
// strategy's name and the format, which the row and the column name ("kr: no construction is
// known exact in bf16 at any max-len (why ...); ..." -> "no construction is known exact"); the
// JSON keeps the whole message.
std::string short_reason(const std::string& message, const std::string& strategy,
                         const std::string& format) {
  std::string s = message.substr(0, std::min(message.find(" ("), message.find(" in " + format)));
  if (s.rfind(strategy + ": ", 0) == 0) s.erase(0, strategy.size() + 2);
  return s;
}

// A format-compiled network's cells: layers, parameters, first wrong position in its format;
// a refusal or a build error takes the last cell.
void format_cells(const json& f, const std::string& strategy, std::vector<std::string>& c) {
  if (f.contains("refused")) {
    c.insert(c.end(),
             {"-", "-", "refused: " + short_reason(f["refused"], strategy, f["precision"])});
  } else if (f.contains("error")) {
    c.insert(c.end(), {"-", "-", "cannot build: " + f["error"].get<std::string>()});
  } else {
    c.push_back(std::to_string(f["layers"].get<int>()));
    c.push_back(std::to_string(f["parameters"].get<long long>()));
    c.push_back(f["first_wrong"].is_null() ? "-"
                                           : std::to_string(f["first_wrong"].get<long long>()));
  }
}

std::vector<std::string> cells(const json& r, const PrecisionBenchArguments& o) {
  std::vector<std::string> c{r["automaton"], r["strategy"],
                             std::to_string(r["max_len"].get<int>())};
  if (r.contains("error")) {
    c.insert(c.end(), {"-", "-", "cannot build: " + r["error"].get<std::string>()});
    return c;
  }
  if (r.contains("skipped")) {
    c.insert(c.end(), {"-", "-", "nothing to measure: " + r["skipped"].get<std::string>()});
    return c;
  }
  c.push_back(std::to_string(r["layers"].get<int>()));
  c.push_back(std::to_string(r["parameters"].get<long long>()));
  for (const std::string& name : o.arithmetics) {
    const json& f = r["first_wrong"][name];
    c.push_back(f.is_null() ? "-" : std::to_string(f.get<long long>()));
  }
  if (r.contains("format_compiled"))
    for (const std::string& name : o.arithmetics)
      if (r["format_compiled"].contains(name))
        format_cells(r["format_compiled"][name], r["strategy"], c);
  return c;
}

std::vector<std::string> header(const PrecisionBenchArguments& o) {
  std::vector<std::string> h{"automaton", "strategy", "max-len", "layers", "parameters"};
  for (const std::string& name : o.arithmetics) h.push_back(name);
  if (!o.fp32_only)
    for (const std::string& name : o.arithmetics)
      if (narrow_format(name))
        h.insert(h.end(),
                 {"layers(" + name + ")", "parameters(" + name + ")", name + "(" + name + ")"});
  return h;
}

int run_precision_bench(const PrecisionBenchArguments& o) {
  json rows = json::array();
  for (const auto& [automaton, file] : bench_automata(o.automata, o.family, o.sizes))
    for (const std::string& s : o.strategies)
      for (int max_len : o.max_lens) {
        rows.push_back(measure(automaton, strategy_from_string(s), max_len, o));
        if (!o.json) std::cerr << "  " << automaton.name() << " " << s << " " << max_len << "\n";
      }
  if (o.json) {
    std::cout << rows.dump(1) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> table{header(o)};
  for (const json& r : rows) table.push_back(cells(r, o));
  for (const std::string& line : aligned(table, [](std::size_t c) { return c < 2; }))
    std::cout << line << "\n";
  std::cout << "\nfirst wrong position (letters read) on " << o.words
            << " random word(s) of max-len letters, seed " << o.seed
            << "; -: right at every position\n";
  if (!o.fp32_only)
    std::cout << "layers(X), parameters(X), X(X): the network compiled with --precision X (same "
                 "strategy, max-len and words), run in X; refused: the compiler has no "
                 "construction exact in X for the strategy (--json has its whole reason)\n";
  return 0;
}

constexpr const char* kColumns =
    "Columns: layers, parameters and one first-wrong column per --arithmetic describe the\n"
    "network compiled for fp32 (krc compile's default). For each narrow arithmetic X (bf16,\n"
    "fp16), layers(X), parameters(X) and X(X) describe the network compiled with --precision X\n"
    "(same strategy, max-len and words), X(X) its first wrong position run in X; where the\n"
    "compiler refuses the strategy in X (kr, onelayer) X(X) says 'refused: ' and why.\n"
    "A first-wrong cell is the first position (letters read) where the state's logit is not\n"
    "strictly the largest, the smallest over the words; -: right at every position.\n"
    "JSON: first_wrong{arithmetic}, and format_compiled{X}: {precision, layers, parameters,\n"
    "form, first_wrong} or {precision, refused} or {precision, error}. See compiler/README.md\n"
    "\"bf16 and fp16\".";

const RegisterBenchSuite precision_suite{BenchSuite{
    "precision", "the first wrong position of each network in bf16, fp16 and float32",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<PrecisionBenchArguments>();
      sub.footer(kColumns);
      sub.add_option("--max-len", a->max_lens, "max_lens to compile at")->capture_default_str();
      sub.add_option("--strategy", a->strategies, "strategies: scan, kr, onelayer")
          ->check(CLI::IsMember(built_strategy_names()))
          ->capture_default_str();
      sub.add_option("--arithmetic", a->arithmetics, "arithmetics to run in")
          ->check(CLI::IsMember(arithmetic_names()))
          ->capture_default_str();
      sub.add_option("--words", a->words, "random words per network")
          ->check(CLI::Range(1, 10000))
          ->capture_default_str();
      sub.add_option("--automata", a->automata, "a directory of automata (default: the zoo)");
      sub.add_option("--zoo", a->family, "a zoo family instead, at the sizes of --n");
      sub.add_option("--n", a->sizes, "the zoo family's sizes");
      sub.add_option("--seed", a->seed, "seed of the random words")->capture_default_str();
      sub.add_option("--threads", a->threads, "words in parallel (default: one per core)")
          ->check(CLI::Range(0, 1024));
      sub.add_flag("--fp32-only", a->fp32_only,
                   "only the fp32-compiled networks (no --precision bf16/fp16 compiles: about "
                   "half the time of the scan rows)");
      sub.add_flag("--json", a->json, "print the rows as JSON");
      return [a] { return run_precision_bench(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
