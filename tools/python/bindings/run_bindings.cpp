// Network.run: the network's forward pass on one word, its state after every prefix, the margin
// of each choice and the automaton's own state beside it (what `krc run` prints).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "bindings.hpp"
#include "krc/forward.hpp"
#include "krc/input_error.hpp"

namespace krc::python {

namespace {

struct RunResult {
  std::vector<std::string> letters, states, expected;
  std::vector<double> margins;  // best - second best logit; inf with one state
  Eigen::MatrixXd logits;       // [len + 1, states]
  std::string attention, arithmetic;
  bool ok() const {
    return states == expected &&
           std::all_of(margins.begin(), margins.end(), [](double m) { return m > 0; });
  }
};

// A token that is a letter stands for it; one that is not but spells one-character letters
// ("0110") stands for them, as on krc run's command line.
std::vector<LetterId> word_of(const std::vector<std::string>& tokens, const Automaton& a) {
  std::vector<LetterId> word;
  for (const auto& token : tokens) {
    if (long l = a.find_letter(token); l >= 0) {
      word.push_back(static_cast<LetterId>(l));
      continue;
    }
    std::vector<LetterId> spelled;
    for (char c : token)
      if (long l = a.find_letter(std::string(1, c)); l >= 0)
        spelled.push_back(static_cast<LetterId>(l));
    if (!token.empty() && spelled.size() == token.size()) {
      word.insert(word.end(), spelled.begin(), spelled.end());
      continue;
    }
    std::string alphabet;
    for (const auto& l : a.letters()) alphabet += (alphabet.empty() ? "" : ", ") + l;
    throw InputError("word", "letter \"" + token + "\"",
                     "not in the network's alphabet (" + alphabet + ")");
  }
  return word;
}

RunResult run(const CompiledNetwork& c, const std::vector<std::string>& tokens,
              const std::optional<std::string>& attention, const std::string& arithmetic) {
  const Network& network = *c.network;
  const Automaton& automaton = c.automaton;
  const std::vector<LetterId> word = word_of(tokens, automaton);
  if (static_cast<long long>(word.size()) > network.max_len)
    throw InputError("word", "letters",
                     std::to_string(word.size()) + " letters, more than the network's max_len " +
                         std::to_string(network.max_len));
  ForwardOptions options;
  options.attention = attention ? attention_kind_from_string(*attention) : network.attention;
  options.arithmetic = arithmetic_from_string(arithmetic);
  RunResult r;
  {
    py::gil_scoped_release unlocked;
    r.logits = ForwardPass(network, options).run(word);
  }
  const std::vector<StateId> expected = automaton.run(word);
  for (LetterId l : word) r.letters.push_back(automaton.letter_name(l));
  for (Eigen::Index t = 0; t < r.logits.rows(); ++t) {
    Eigen::Index best = 0;
    r.logits.row(t).maxCoeff(&best);
    double second = -std::numeric_limits<double>::infinity();
    for (Eigen::Index s = 0; s < r.logits.cols(); ++s)
      if (s != best) second = std::max(second, r.logits(t, s));
    r.states.push_back(network.states[static_cast<std::size_t>(best)]);
    r.margins.push_back(r.logits(t, best) - second);
    r.expected.push_back(automaton.state_name(expected[static_cast<std::size_t>(t)]));
  }
  r.attention = to_string(options.attention);
  r.arithmetic = to_string(options.arithmetic);
  return r;
}

}  // namespace

void bind_run(py::module_& m) {
  py::class_<RunResult>(m, "RunResult", "One word through the network (Network.run).")
      .def_readonly("letters", &RunResult::letters)
      .def_readonly("states", &RunResult::states,
                    "the network's state after every prefix (position 0: the empty one)")
      .def_readonly("expected", &RunResult::expected, "the automaton's states, the same places")
      .def_readonly("margins", &RunResult::margins, "best logit - the runner-up, per position")
      .def_readonly("logits", &RunResult::logits, "[len(word) + 1, states]")
      .def_readonly("attention", &RunResult::attention)
      .def_readonly("arithmetic", &RunResult::arithmetic)
      .def_property_readonly("ok", &RunResult::ok,
                             "every state the automaton's, with a positive margin");
  py::class_<CompiledNetwork> network =
      py::reinterpret_borrow<py::class_<CompiledNetwork>>(m.attr("Network"));
  network.def("run", &run, py::arg("tokens"), py::arg("attention") = py::none(),
              py::arg("arithmetic") = to_string(kDefaultArithmetic));
}

}  // namespace krc::python
