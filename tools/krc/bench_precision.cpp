// `krc bench precision [--max-len N ...] [--strategy S ...] [--arithmetic A ...] [--words K]
// [--automata DIR | --zoo FAMILY --n N ...] [--seed S] [--json]`: where each network stops
// being right in each arithmetic. For every automaton (by default the zoo), strategy and
// max_len it compiles the network (today's float32 networks), runs K random words of max_len
// letters in each arithmetic (by default bf16, fp16 and float32, runtime README "bf16 and
// fp16") and prints the first position where the network's state differs from the
// automaton's (the smallest over the words; "-" when every position is right), beside the
// network's layers and parameters.
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_automata.hpp"
#include "bench_suite.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "option_checks.hpp"
#include "text_table.hpp"

namespace krc::cli {

namespace {

using nlohmann::json;

struct PrecisionBenchArguments {
  std::vector<int> max_lens{1024, 4096, 16384};
  std::vector<std::string> strategies{"scan", "kr"};
  std::vector<std::string> arithmetics{"bf16", "fp16", "float32"};
  std::string automata, family;
  std::vector<int> sizes;
  int words = 1, threads = 0;
  unsigned long long seed = 1;
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

// One network's row: its size and, per arithmetic, the first wrong position (-1: none).
json measure(const Automaton& a, Strategy strategy, int max_len, const PrecisionBenchArguments& o) {
  json row{{"automaton", a.name()}, {"strategy", to_string(strategy)}, {"max_len", max_len}};
  if (a.letter_count() == 0) {  // no word of length > 0 to stop being right on
    row["skipped"] = empty_alphabet_clause();
    return row;
  }
  CompileOptions options;
  options.strategy = strategy;
  options.max_len = max_len;
  Network network;
  try {
    network = compile(a, options).network;
  } catch (const std::exception& e) {
    row["error"] = e.what();
    return row;
  }
  const NetworkSize size = network.size();
  row["layers"] = size.layers;
  row["parameters"] = size.parameters;
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<LetterId> letter(0, static_cast<LetterId>(a.letter_count() - 1));
  std::vector<std::vector<LetterId>> words(o.words, std::vector<LetterId>(max_len));
  for (auto& w : words)
    for (auto& l : w) l = letter(rng);
  for (const std::string& name : o.arithmetics) {
    ForwardPass pass(network, {AttentionKind::Softmax, arithmetic_from_string(name), o.threads});
    const auto logits = pass.run(words);
    long long first = -1;
    for (std::size_t w = 0; w < words.size(); ++w) {
      const long long f = first_wrong(logits[w], a.run(words[w]));
      if (f >= 0 && (first < 0 || f < first)) first = f;
    }
    row["first_wrong"][name] = first < 0 ? json(nullptr) : json(first);
  }
  return row;
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
  return c;
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
  std::vector<std::vector<std::string>> table{
      {"automaton", "strategy", "max-len", "layers", "parameters"}};
  for (const std::string& name : o.arithmetics) table[0].push_back(name);
  for (const json& r : rows) table.push_back(cells(r, o));
  for (const std::string& line : aligned(table, [](std::size_t c) { return c < 2; }))
    std::cout << line << "\n";
  std::cout << "\nfirst wrong position (letters read) on " << o.words
            << " random word(s) of max-len letters, seed " << o.seed
            << "; -: right at every position\n";
  return 0;
}

const RegisterBenchSuite precision_suite{BenchSuite{
    "precision", "the first wrong position of each network in bf16, fp16 and float32",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<PrecisionBenchArguments>();
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
      sub.add_flag("--json", a->json, "print the rows as JSON");
      return [a] { return run_precision_bench(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
