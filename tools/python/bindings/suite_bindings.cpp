// krc.suite: the front door's build_suite (front_door/suite.hpp), the same request as `krc suite`
// with the same defaults and bounds, writing the same bytes. Progress goes to a Python callable
// as a dict; a network found wrong raises krc.VerificationError.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "interrupt_scope.hpp"
#include "suite.hpp"

namespace krc::python {

namespace {

std::string suite(const std::string& directory, const std::vector<std::string>& files,
                  const std::string& set, const std::vector<std::string>& strategies,
                  const std::vector<std::string>& norm, long long max_len, long long random,
                  long long max_models, long long max_bytes, py::object progress) {
  front_door::SuiteRequest request;
  request.set = set;
  request.files = files;
  request.strategies = strategies;
  request.norms = norm;
  request.max_len = max_len;
  request.verify_random = random;
  request.max_models = max_models;
  request.max_bytes = max_bytes;
  front_door::OutputOptions options;
  options.inputs = files;
  options.option = "directory";
  options.guard_signals = false;  // Python keeps its own handlers
  // As krc.compile's: a handle the caller keeps alive; Ctrl-C is looked for after each model.
  auto report = [callable = py::handle(progress)](const front_door::SuiteProgress& p) {
    py::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (callable.is_none()) return;
    py::dict d;
    d["done"] = p.done;
    d["total"] = p.total;
    d["model"] = p.model;
    d["seconds"] = p.seconds;
    d["seconds_left"] = p.seconds_left;
    d["line"] = front_door::suite_progress_line(p);
    callable(d);
  };
  front_door::SuiteResult result;
  std::string mismatch;
  {
    InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
    py::gil_scoped_release unlocked;
    try {
      result =
          front_door::build_suite(directory, request, front_door::Door::Python, report, options);
    } catch (const front_door::SuiteMismatch& e) {
      mismatch = e.what();
    }
  }
  if (!mismatch.empty()) {
    py::object cls = py::module_::import("krc.errors").attr("VerificationError");
    PyErr_SetObject(cls.ptr(), cls(mismatch).ptr());
    throw py::error_already_set();
  }
  return result.manifest.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void bind_suite(py::module_& m) {
  const front_door::SuiteRequest defaults;
  m.def("suite", &suite, py::arg("directory"), py::arg("files") = defaults.files,
        py::arg("set") = defaults.set, py::arg("strategies") = defaults.strategies,
        py::arg("norm") = defaults.norms, py::arg("max_len") = defaults.max_len,
        py::arg("random") = defaults.verify_random, py::arg("max_models") = defaults.max_models,
        py::arg("max_bytes") = defaults.max_bytes, py::arg("progress") = py::none(),
        "Builds a suite (front_door/suite.hpp) and returns its manifest as JSON text.");
}

}  // namespace krc::python
