// Network.run: the network's forward pass on one word, its state after every prefix, the margin
// of each choice and the automaton's own state beside it (what `krc run` prints).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "bindings.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/word_run.hpp"

namespace krc::python {

// One prepared pass per (attention, arithmetic), made on first use. The mutex guards the map
// only: a pass is thread-safe once made (ForwardPass::run), and is never removed while the
// network lives.
struct ForwardPasses {
  std::mutex mutex;
  std::map<std::pair<AttentionKind, Arithmetic>, std::unique_ptr<ForwardPass>> made;
  const ForwardPass& get(const Network& network, const ForwardOptions& options) {
    const std::lock_guard<std::mutex> lock(mutex);
    auto& pass = made[{options.attention, options.arithmetic}];
    if (!pass) pass = std::make_unique<ForwardPass>(network, options);
    return *pass;
  }
};

namespace {

struct RunResult {
  std::vector<std::string> letters, states, expected;
  std::vector<double> margins;  // best - second best logit; inf with one state
  Eigen::MatrixXd logits;       // [len + 1, states]
  std::string attention, arithmetic;
  bool ok = false;  // WordRun::right
};

RunResult run(CompiledNetwork& c, const std::vector<std::string>& tokens,
              const std::optional<std::string>& attention, const std::string& arithmetic) {
  const Network& network = *c.network;
  const Automaton& automaton = c.automaton;
  ForwardOptions options;
  options.attention = attention ? attention_kind_from_string(*attention) : network.attention;
  options.arithmetic = arithmetic_from_string(arithmetic);
  std::vector<LetterId> word = parse_word(tokens, automaton, "word");
  check_word_length(network, word.size(), "word");              // before preparing anything
  if (!c.passes) c.passes = std::make_shared<ForwardPasses>();  // under the GIL
  const std::shared_ptr<ForwardPasses> passes = c.passes;
  WordRun ran;
  {
    py::gil_scoped_release unlocked;
    ran = run_word(passes->get(network, options), automaton, std::move(word), "word");
  }
  RunResult r;
  r.logits = std::move(ran.logits);
  for (LetterId l : ran.word) r.letters.push_back(automaton.letter_name(l));
  for (std::size_t t = 0; t < ran.states.size(); ++t) {
    r.states.push_back(network.states[ran.states[t]]);
    r.expected.push_back(automaton.state_name(ran.expected[t]));
  }
  r.margins = std::move(ran.margins);
  r.ok = ran.right();
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
      .def_readonly("ok", &RunResult::ok, "every state the automaton's, with a positive margin");
  py::class_<CompiledNetwork> network =
      py::reinterpret_borrow<py::class_<CompiledNetwork>>(m.attr("Network"));
  network.def("run", &run, py::arg("tokens"), py::arg("attention") = py::none(),
              py::arg("arithmetic") = to_string(kDefaultArithmetic));
  // How many forward passes run has prepared and kept (tests: one per attention and arithmetic).
  network.def("_prepared_passes", [](const CompiledNetwork& c) -> std::size_t {
    if (!c.passes) return 0;
    const std::lock_guard<std::mutex> lock(c.passes->mutex);
    return c.passes->made.size();
  });
}

}  // namespace krc::python
