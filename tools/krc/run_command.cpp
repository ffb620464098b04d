// `krc run FILE [letters...] [--json] [--attention softmax|hard|hardmax] [--arithmetic
// float32|float64-accumulate|float64] [--float64]`: runs the
// network in a weights file on one word and prints its state after every prefix, the
// margin of its choice (best logit - second best) and the automaton's state for comparison.
#include <iomanip>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/weights_file.hpp"
#include "krc/runtime/word_run.hpp"
#include "precision_line.hpp"

namespace krc::cli {

namespace {

struct RunArguments {
  std::string file;
  std::vector<std::string> letters;
  std::string attention, arithmetic;
  bool float64 = false, json = false;
};

int run_file(const RunArguments& a) {
  const Network network = load_network(a.file);
  const Automaton automaton =
      automaton_from_json(network.automaton, a.file);  // checked by the loader
  ForwardOptions options;
  options.attention =
      a.attention.empty() ? network.attention : attention_kind_from_string(a.attention);
  options.arithmetic = a.float64              ? Arithmetic::Float64
                       : a.arithmetic.empty() ? kDefaultArithmetic
                                              : arithmetic_from_string(a.arithmetic);
  warn_if_uncertified(network.compiler, to_string(options.arithmetic), a.file);
  const WordRun r = run_word(network, automaton, parse_word(a.letters, automaton, "command line"),
                             options, "command line");
  const auto& [word, logits, states, margins, expected, ran] = r;

  if (a.json) {
    nlohmann::json out = {
        {"letters", nlohmann::json::array()},     {"states", nlohmann::json::array()},
        {"margins", nlohmann::json::array()},     {"expected", nlohmann::json::array()},
        {"logits", nlohmann::json::array()},      {"attention", to_string(ran.attention)},
        {"arithmetic", to_string(ran.arithmetic)}};
    for (LetterId l : word) out["letters"].push_back(automaton.letter_name(l));
    for (std::size_t t = 0; t < states.size(); ++t) {
      out["states"].push_back(automaton.state_name(states[t]));
      out["margins"].push_back(std::isfinite(margins[t]) ? nlohmann::json(margins[t])
                                                         : nlohmann::json(nullptr));
      out["expected"].push_back(automaton.state_name(expected[t]));
      // Every logit, so that other frameworks can be compared with krc's own arithmetic; in
      // float32 each double holds a float32 value exactly.
      nlohmann::json row = nlohmann::json::array();
      for (Eigen::Index s = 0; s < logits.cols(); ++s) row.push_back(logits(t, s));
      out["logits"].push_back(row);
    }
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::size_t wl = 6, ws = 5;
  for (const auto& l : automaton.letters()) wl = std::max(wl, l.size());
  for (const auto& s : automaton.states()) ws = std::max(ws, s.size());
  std::cout << std::setw(9) << "position"
            << "  " << std::left << std::setw(static_cast<int>(wl)) << "letter"
            << "  " << std::setw(static_cast<int>(ws)) << "state"
            << "  " << std::right << std::setw(10) << "margin"
            << "  automaton\n";
  for (std::size_t t = 0; t < states.size(); ++t) {
    std::cout << std::setw(9) << t << "  " << std::left << std::setw(static_cast<int>(wl))
              << (t == 0 ? "<bos>" : automaton.letter_name(word[t - 1])) << "  "
              << std::setw(static_cast<int>(ws)) << automaton.state_name(states[t]) << "  "
              << std::right << std::setw(10) << std::setprecision(4) << margins[t] << "  "
              << automaton.state_name(expected[t])
              << (states[t] == expected[t] && margins[t] > 0 ? "" : "   <- differs") << "\n";
  }
  return 0;
}

const RegisterCommand run_registration{Command{
    "run", "Run the network in a weights file on one word; print its state after every prefix", 40,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<RunArguments>();
      sub.add_option("FILE", a->file, "weights file (.safetensors)")->required();
      sub.add_option("letters", a->letters,
                     "the word: one letter per argument, or a string of letters separated by tabs, "
                     "or else by spaces and commas outside brackets");
      sub.add_option("--attention", a->attention,
                     "softmax, hard or hardmax (default: what the file was compiled for; see "
                     "krc verify --help)")
          ->check(CLI::IsMember(attention_kind_names()));
      sub.add_option("--arithmetic", a->arithmetic,
                     std::string("float32, float64-accumulate, float64, bf16 or fp16 (default ") +
                         to_string(kDefaultArithmetic) + "; see krc verify --help)")
          ->check(CLI::IsMember(arithmetic_names()));
      sub.add_flag("--float64", a->float64, "the same as --arithmetic float64")
          ->excludes("--arithmetic");
      sub.add_flag("--json", a->json, "print JSON: letters, states, margins, expected, logits");
      return [a] { return run_file(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
