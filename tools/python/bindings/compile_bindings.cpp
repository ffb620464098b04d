// krc.compile: Automaton -> Network by a strategy, with the plan it chose and why.
#include <pybind11/stl.h>

#include <type_traits>
#include <variant>

#include "bindings.hpp"
#include "compile_request.hpp"
#include "interrupt_scope.hpp"
#include "krc/automata/machine_outputs.hpp"
#include "krc/backend/compile.hpp"

namespace krc::python {

namespace {

// The outputs a file carried (Mealy, Moore, acceptor), which krc.load_automaton keeps on the
// Automaton it returns: the command line compiles the same file with them.
MachineOutputs carried_outputs(const py::object& automaton) {
  MachineOutputs outputs;
  if (!py::hasattr(automaton, "_outputs")) return outputs;
  auto [mealy, moore, acceptor] =
      automaton.attr("_outputs")
          .cast<
              std::tuple<std::vector<std::vector<std::string>>, std::vector<std::string>, bool>>();
  outputs.mealy = std::move(mealy);
  outputs.moore = std::move(moore);
  outputs.acceptor = acceptor;
  return outputs;
}

CompiledNetwork compile_network(const py::object& automaton_object, const std::string& strategy,
                                long long max_len, const std::string& attention,
                                long long max_onelayer_units, long long max_onelayer_values,
                                py::object progress, const std::string& norm,
                                const std::string& precision, const std::string& counting,
                                const std::optional<std::string>& output_kind, bool certify) {
  if (!py::isinstance<Automaton>(automaton_object))
    throw py::type_error(
        "krc.compile: automaton must be a krc.Automaton (krc.load_automaton, "
        "krc.zoo), not " +
        std::string(py::str(py::type::of(automaton_object).attr("__name__"))));
  const Automaton& file_automaton = automaton_object.cast<const Automaton&>();
  front_door::CompileRequest request;
  request.strategy = strategy;
  request.attention = attention;
  request.precision = precision;
  request.norm = norm;
  request.counting = counting;
  request.output_kind = output_kind.value_or("");
  request.max_len = max_len;
  request.max_onelayer_units = max_onelayer_units;
  request.max_onelayer_values = max_onelayer_values;
  request.certify = certify;
  // std::invalid_argument (a name or a bound, spelt as the keyword): ValueError.
  front_door::PreparedCompile prepared =
      front_door::prepare_compile(file_automaton, carried_outputs(automaton_object), request,
                                  front_door::Door::Python, file_automaton.name());
  // A handle, not an object: copies made without the GIL touch no reference count; the
  // caller's argument keeps the callable alive through the call. Without a callable the hook
  // still looks for Ctrl-C at every stage: KeyboardInterrupt stops the compilation there.
  prepared.options.progress = [callable = py::handle(progress)](const std::string& stage) {
    py::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!callable.is_none()) callable(stage);
  };
  InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
  py::gil_scoped_release unlocked;
  // As the command line names the file in compile's refusals, Python names the automaton.
  CompileResult result = front_door::compile_prepared(prepared, file_automaton.name());
  front_door::certify_compiled(result.network, prepared.machine.automaton, request,
                               front_door::Door::Python, file_automaton.name());
  auto network = std::make_shared<const Network>(std::move(result.network));
  result.network = Network{};
  return CompiledNetwork{std::move(network), std::move(prepared.machine.automaton), "",
                         std::move(result)};
}

// The request layer's option table (compile_request.hpp), with each option's default: what the
// tests that compare the two doors enumerate.
py::list compile_request_options() {
  const front_door::CompileRequest defaults;
  py::list options;
  for (const front_door::RequestOption& option : front_door::compile_request_options()) {
    py::dict entry;
    entry["keyword"] = option.keyword;
    std::visit(
        [&](auto field) {
          using Value = std::decay_t<decltype(defaults.*field)>;
          entry["kind"] = std::is_same_v<Value, std::string> ? "choice"
                          : std::is_same_v<Value, bool>      ? "flag"
                                                             : "number";
          entry["default"] = defaults.*field;
        },
        option.field);
    entry["names"] = option.names;
    entry["min"] = option.min;
    entry["max"] = option.max;
    entry["optional"] = option.optional;
    options.append(entry);
  }
  return options;
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
  // The command line's defaults: one CompileRequest for both doors.
  const front_door::CompileRequest defaults;
  m.def("compile", &compile_network, py::arg("automaton"), py::arg("strategy") = defaults.strategy,
        py::arg("max_len") = defaults.max_len, py::arg("attention") = defaults.attention,
        py::arg("max_onelayer_units") = defaults.max_onelayer_units,
        py::arg("max_onelayer_values") = defaults.max_onelayer_values,
        py::arg("progress") = py::none(), py::arg("norm") = defaults.norm,
        py::arg("precision") = defaults.precision, py::arg("counting") = defaults.counting,
        py::arg("output_kind") = py::none(), py::arg("certify") = defaults.certify);
  m.def("compile_request_options", &compile_request_options);
}

}  // namespace krc::python
