// krc.compile: Automaton -> Network by a strategy, with the plan it chose and why.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "krc/backend/compile.hpp"

namespace krc::python {

namespace {

CompiledNetwork compile_network(const Automaton& automaton, const std::string& strategy,
                                int max_len, const std::string& attention, int max_onelayer_units,
                                long long max_onelayer_values, py::object progress,
                                const std::string& norm) {
  CompileOptions options;
  options.strategy = strategy_from_string(strategy);  // std::invalid_argument: ValueError
  options.norm = norm_from_string(norm);
  options.attention = attention_kind_from_string(attention);
  if (max_len < 1) throw py::value_error("max_len must be at least 1");
  if (max_onelayer_units < 1 || max_onelayer_values < 1)
    throw py::value_error("max_onelayer_units and max_onelayer_values must be positive");
  options.max_len = max_len;
  options.onelayer.max_units = max_onelayer_units;
  options.onelayer.max_values = max_onelayer_values;
  // A handle, not an object: copies made without the GIL touch no reference count; the
  // caller's argument keeps the callable alive through the call.
  if (!progress.is_none())
    options.progress = [callable = py::handle(progress)](const std::string& stage) {
      py::gil_scoped_acquire locked;
      callable(stage);
    };
  py::gil_scoped_release unlocked;
  CompileResult result = compile(automaton, options);
  auto network = std::make_shared<const Network>(std::move(result.network));
  result.network = Network{};
  return CompiledNetwork{std::move(network), automaton, "", std::move(result)};
}

}  // namespace

void bind_compile(py::module_& m) {
  using C = CompiledNetwork;
  py::class_<C> network = py::reinterpret_borrow<py::class_<C>>(m.attr("Network"));
  network
      .def_property_readonly("strategy",
                             [](const C& c) -> std::optional<std::string> {
                               if (!c.compiled) return std::nullopt;
                               return to_string(c.compiled->strategy);
                             })
      .def_property_readonly("reason",
                             [](const C& c) -> std::optional<std::string> {
                               if (!c.compiled) return std::nullopt;
                               return c.compiled->reason;
                             })
      .def_property_readonly(
          "scan_plan", [](const C& c) { return c.compiled ? c.compiled->scan : std::nullopt; })
      .def_property_readonly("kr_plan",
                             [](const C& c) { return c.compiled ? c.compiled->kr : std::nullopt; })
      .def_property_readonly(
          "walk_plan", [](const C& c) { return c.compiled ? c.compiled->walk : std::nullopt; })
      .def_property_readonly("onelayer_plan", [](const C& c) {
        return c.compiled ? c.compiled->onelayer : std::nullopt;
      });
  const CompileOptions defaults;
  m.def("compile", &compile_network, py::arg("automaton"), py::arg("strategy") = "auto",
        py::arg("max_len") = defaults.max_len, py::arg("attention") = "softmax",
        py::arg("max_onelayer_units") = defaults.onelayer.max_units,
        py::arg("max_onelayer_values") = defaults.onelayer.max_values,
        py::arg("progress") = py::none(), py::arg("norm") = "none");
}

}  // namespace krc::python
