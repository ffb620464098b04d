#pragma once
// krc._core, the C++ side of the Python package `krc`: one file per stage of the pipeline, each
// adding its classes and functions to the module. The bindings translate types and errors and
// nothing more; the logic stays in the libraries (tools/python/README in tools/README.md).
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/network.hpp"

namespace krc::python {

namespace py = pybind11;

// What `krc.compile` and `krc.load` give Python: the network, the automaton it computes, and,
// when it was compiled in this process, the strategy, the reason and the plans.
struct ForwardPasses;  // run_bindings.cpp: the prepared forward passes Network.run reuses

struct CompiledNetwork {
  std::shared_ptr<const Network> network;
  Automaton automaton;
  std::string source;                     // the file it was loaded from; "" when compiled here
  std::optional<CompileResult> compiled;  // its network moved out into `network`
  // Prepared once per (attention, arithmetic) on the first Network.run and kept with the
  // network (a 127-state scan took 0.1 s to prepare on every call). Shared by copies, which
  // share the network it points into.
  std::shared_ptr<ForwardPasses> passes = nullptr;
};

void bind_errors(py::module_& m);
void bind_automaton(py::module_& m);
void bind_decompose(py::module_& m);
void bind_plans(py::module_& m);
void bind_network(py::module_& m);
void bind_compile(py::module_& m);
void bind_run(py::module_& m);
void bind_verify(py::module_& m);
void bind_output(py::module_& m);
void bind_suite(py::module_& m);

// A property that returns the elements of a vector member as references kept alive by their
// owner (no copies of the weights each time Python reads `layers`).
template <typename Element>
py::list references(const std::vector<Element>& elements, py::handle owner) {
  py::list list;
  for (const Element& e : elements)
    list.append(py::cast(&e, py::return_value_policy::reference_internal, owner));
  return list;
}

}  // namespace krc::python
