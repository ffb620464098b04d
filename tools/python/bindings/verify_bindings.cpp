// Network.verify: the verifier's report as an object, the counterexample by names, progress
// through a Python callable (called from the verifying thread, with the GIL taken).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "compile_request.hpp"
#include "interrupt_scope.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/runtime/verifier.hpp"
#include "verify_limits.hpp"

namespace krc::python {

namespace {

struct NamedCounterexample {
  std::string part;
  long long word_index = 0, position = 0;
  std::vector<std::string> word, expected, actual;
  std::vector<bool> wrong;
};

struct VerifyResult {
  VerifyReport report;
  std::string text;
  std::optional<NamedCounterexample> counterexample;
};

NamedCounterexample named(const Counterexample& c, const Automaton& a) {
  NamedCounterexample n{
      to_string(c.first_error.part), c.first_error.word, c.first_error.position, {}, {}, {}, {}};
  for (LetterId l : c.word) n.word.push_back(a.letter_name(l));
  for (StateId q : c.expected) n.expected.push_back(a.state_name(q));
  for (StateId q : c.actual) n.actual.push_back(a.state_name(q));
  for (char w : c.wrong) n.wrong.push_back(w != 0);
  return n;
}

VerifyResult verify_network(const CompiledNetwork& c, std::optional<int> exhaustive,
                            std::optional<long long> random, std::optional<int> length,
                            std::uint64_t seed, const std::optional<std::string>& attention,
                            const std::string& arithmetic, int threads, py::object progress) {
  const Network& network = *c.network;
  const std::string file = c.source.empty() ? std::string("network") : c.source;
  auto too_long = [&](const char* option, const std::optional<int>& value) {
    if (value && (*value < 0 || *value > network.max_len))
      throw InputError(file, option,
                       std::to_string(*value) + " is not between 0 and the network's max_len " +
                           std::to_string(network.max_len));
  };
  too_long("exhaustive", exhaustive);
  too_long("length", length);
  // The command's bounds, checked as its are (`krc verify --random`, `--threads`).
  if (random)
    front_door::check_range(front_door::Door::Python, "random", *random, 0,
                            front_door::kMaxRandomWords);
  front_door::check_range(front_door::Door::Python, "threads", threads, 0, front_door::kMaxThreads);
  VerifyOptions options;
  options.exhaustive_length = exhaustive;
  options.random_words = random;
  options.random_length = length;
  options.seed = seed;
  options.forward.attention =
      attention ? attention_kind_from_string(*attention) : network.attention;
  options.forward.arithmetic = arithmetic_from_string(arithmetic);
  options.forward.threads = threads;
  // As in compile: a handle the caller keeps alive; a copy of the progress for Python to keep.
  // Without a callable, the same hook still looks for Ctrl-C after every batch of words:
  // KeyboardInterrupt stops the run there instead of when it is done.
  options.progress = [callable = py::handle(progress)](const VerifyProgress& p) {
    py::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!callable.is_none()) callable(py::cast(p, py::return_value_policy::copy));
  };
  VerifyResult result;
  {
    InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
    py::gil_scoped_release unlocked;
    try {
      result.report = verify(network, c.automaton, options);
    } catch (const std::invalid_argument& e) {  // e.g. more words of a length than can be counted
      throw InputError(file, "", e.what());
    }
    result.text = format_report(result.report, c.automaton);
    if (result.report.counterexample)
      result.counterexample = named(*result.report.counterexample, c.automaton);
  }
  return result;
}

void bind_classes(py::module_& m) {
  py::class_<VerifyProgress>(m, "VerifyProgress", "Where a verification is, for progress lines.")
      .def_readonly("words_done", &VerifyProgress::words_done)
      .def_readonly("words_total", &VerifyProgress::words_total)
      .def_readonly("positions_done", &VerifyProgress::positions_done)
      .def_readonly("positions_total", &VerifyProgress::positions_total)
      .def_readonly("seconds", &VerifyProgress::seconds)
      .def_readonly("seconds_left", &VerifyProgress::seconds_left, "< 0 while unknown")
      .def("__str__", &progress_line, "krc verify's progress line for this point");
  py::class_<NamedCounterexample>(m, "Counterexample", "The first wrong word of a verification.")
      .def_readonly("part", &NamedCounterexample::part, "\"exhaustive\" or \"random\"")
      .def_readonly("word_index", &NamedCounterexample::word_index)
      .def_readonly("position", &NamedCounterexample::position, "first wrong position (0: BOS)")
      .def_readonly("word", &NamedCounterexample::word)
      .def_readonly("expected", &NamedCounterexample::expected)
      .def_readonly("actual", &NamedCounterexample::actual)
      .def_readonly("wrong", &NamedCounterexample::wrong);
  using R = VerifyResult;
  auto field = [](auto member) { return [member](const R& r) { return r.report.*member; }; };
  py::class_<R>(m, "VerifyReport", "What Network.verify checked and found.")
      .def_property_readonly("ok", [](const R& r) { return r.report.ok(); })
      .def_property_readonly("attention", [](const R& r) { return to_string(r.report.attention); })
      .def_property_readonly("arithmetic",
                             [](const R& r) { return to_string(r.report.arithmetic); })
      .def_property_readonly("exhaustive_length", field(&VerifyReport::exhaustive_length))
      .def_property_readonly("exhaustive_words", field(&VerifyReport::exhaustive_words))
      .def_property_readonly("random_words", field(&VerifyReport::random_words))
      .def_property_readonly("random_length", field(&VerifyReport::random_length))
      .def_property_readonly("seed", field(&VerifyReport::seed))
      .def_property_readonly("words", field(&VerifyReport::words))
      .def_property_readonly("positions", field(&VerifyReport::positions))
      .def_property_readonly("wrong_positions", field(&VerifyReport::wrong_positions))
      .def_property_readonly("wrong_words", field(&VerifyReport::wrong_words))
      .def_property_readonly("smallest_margin", field(&VerifyReport::smallest_margin))
      .def_property_readonly("seconds", field(&VerifyReport::seconds))
      .def_property_readonly("budget_limited",
                             [](const R& r) { return r.report.budget && r.report.budget->limited; })
      .def_property_readonly(
          "budget_below_minimum",
          [](const R& r) { return r.report.budget && r.report.budget->below_minimum; },
          "fewer random words than a default run's minimum of 20: even those would have passed "
          "the run's ceiling of 480 s (a network that takes a minute a word)")
      .def_readonly("counterexample", &R::counterexample)
      .def_readonly("text", &R::text, "the report as `krc verify` prints it")
      .def("__str__", [](const R& r) { return r.text; })
      .def("__bool__", [](const R& r) { return r.report.ok(); });
}

}  // namespace

void bind_verify(py::module_& m) {
  bind_classes(m);
  py::class_<CompiledNetwork> network =
      py::reinterpret_borrow<py::class_<CompiledNetwork>>(m.attr("Network"));
  network.def("verify", &verify_network, py::arg("exhaustive") = py::none(),
              py::arg("random") = py::none(), py::arg("length") = py::none(), py::arg("seed") = 1,
              py::arg("attention") = py::none(),
              py::arg("arithmetic") = to_string(kDefaultArithmetic), py::arg("threads") = 0,
              py::arg("progress") = py::none());
}

}  // namespace krc::python
