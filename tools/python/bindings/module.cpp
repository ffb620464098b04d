// PYBIND11_MODULE(_core): the module that `import krc` loads; krc/__init__.py re-exports it.
#include "bindings.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/version.hpp"

PYBIND11_MODULE(_core, m) {
  namespace python = krc::python;
  m.doc() = "krc's C++ core (compile automata into transformers, verify them by running them)";
  m.attr("__version__") = krc::kVersion;
  python::bind_errors(m);
  m.def(
      "set_max_memory",
      [](std::uint64_t bytes) {
        if (bytes == 0) throw pybind11::value_error("max_memory must be positive");
        krc::set_memory_budget(bytes);
      },
      pybind11::arg("bytes"));
  m.def("max_memory", &krc::memory_budget);
  python::bind_automaton(m);
  python::bind_decompose(m);
  python::bind_plans(m);
  python::bind_network(m);
  python::bind_compile(m);
  python::bind_run(m);
  python::bind_verify(m);
  python::bind_output(m);
  python::bind_suite(m);
}
