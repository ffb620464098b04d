// The typed plans of the strategies (krc/backend/plan.hpp) as read-only Python objects: what
// `krc compile` prints, as attributes. Enumerations arrive as their printed names.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "krc/backend/plan.hpp"

namespace krc::python {

namespace {

void bind_scan(py::module_& m) {
  py::class_<ScanPlan>(m, "ScanPlan", "A parallel prefix (Liu et al. Theorem 1).")
      .def_property_readonly("form", [](const ScanPlan& p) { return to_string(p.form); })
      .def_readonly("set_size", &ScanPlan::set_size)
      .def_readonly("monoid_size", &ScanPlan::monoid_size, "|M| in the element form, else 0")
      .def_readonly("steps", &ScanPlan::steps, "ceil(log2 max_len)")
      .def_readonly("units", &ScanPlan::units, "hidden units of the widest compose MLP");
}

void bind_kr(py::module_& m) {
  py::class_<KrComponentPlan>(m, "KrComponentPlan")
      .def_readonly("tiles", &KrComponentPlan::tiles)
      .def_readonly("group", &KrComponentPlan::group)
      .def_readonly("counters", &KrComponentPlan::counters, "Z_p moduli, top first");
  py::class_<KrLevelPlan>(m, "KrLevelPlan", "How the kr strategy computes one level.")
      .def_readonly("level", &KrLevelPlan::level)
      .def_property_readonly("mode", [](const KrLevelPlan& p) { return to_string(p.mode); })
      .def_readonly("resets", &KrLevelPlan::resets)
      .def_readonly("values", &KrLevelPlan::values)
      .def_readonly("components", &KrLevelPlan::components)
      .def_property_readonly("scan",
                             [](const KrLevelPlan& p) -> std::optional<ScanPlan> {
                               if (p.mode != LevelMode::Scan) return std::nullopt;
                               return p.scan;
                             })
      .def_property_readonly("sublayers", [](const KrLevelPlan& p) {
        return std::make_pair(p.first_sublayer, p.last_sublayer);
      });
  py::class_<WalkLetter>(m, "WalkLetter",
                         "A letter of a clamped walk: c -> clamp(c + shift, low, high).")
      .def_readonly("name", &WalkLetter::name)
      .def_readonly("shift", &WalkLetter::shift)
      .def_readonly("low", &WalkLetter::low)
      .def_readonly("high", &WalkLetter::high);
  py::class_<WalkPlan>(m, "WalkPlan", "A clamped walk on a path (Liu et al. Theorem 3).")
      .def_property_readonly("form", [](const WalkPlan& p) { return to_string(p.form); })
      .def_readonly("cells", &WalkPlan::cells)
      .def_readonly("initial", &WalkPlan::initial)
      .def_readonly("state_of_cell", &WalkPlan::state_of_cell)
      .def_readonly("letters", &WalkPlan::letters)
      .def_readonly("heads", &WalkPlan::heads)
      .def_readonly("mlp_units", &WalkPlan::mlp_units)
      .def_readonly("max_len", &WalkPlan::max_len)
      .def_readonly("layers", &WalkPlan::layers)
      .def("text", [](const WalkPlan& p) { return plan_text(p); })
      .def("__str__", [](const WalkPlan& p) { return plan_text(p); });
  py::class_<KrPlan>(m, "KrPlan", "A Krohn-Rhodes cascade (Liu et al. Theorem 2).")
      .def_property_readonly("form", [](const KrPlan& p) { return to_string(p.form); })
      .def_readonly("max_len", &KrPlan::max_len)
      .def_property_readonly("counter_sum",
                             [](const KrPlan& p) { return to_string(p.counter_sum); })
      .def_readonly("counter_block", &KrPlan::counter_block)
      .def_readonly("levels", &KrPlan::levels)
      .def_readonly("layers", &KrPlan::layers)
      .def("text", [](const KrPlan& p) { return plan_text(p); })
      .def("__str__", [](const KrPlan& p) { return plan_text(p); });
}

void bind_onelayer(py::module_& m) {
  py::class_<OneLayerPlan>(m, "OneLayerPlan", "One attention layer as a contextual mapping.")
      .def_property_readonly("code", [](const OneLayerPlan& p) { return to_string(p.code); })
      .def_readonly("max_len", &OneLayerPlan::max_len)
      .def_readonly("largest_len", &OneLayerPlan::largest_len)
      .def_readonly("classes", &OneLayerPlan::classes)
      .def_readonly("letter_code", &OneLayerPlan::letter_code)
      .def_readonly("sharpness", &OneLayerPlan::sharpness)
      .def_readonly("values", &OneLayerPlan::values)
      .def_readonly("transformations", &OneLayerPlan::transformations)
      .def_readonly("reachable_states", &OneLayerPlan::reachable_states)
      .def_readonly("run_states", &OneLayerPlan::run_states)
      .def_readonly("relative_error", &OneLayerPlan::relative_error)
      .def_readonly("safety", &OneLayerPlan::safety)
      .def_property_readonly("units", &OneLayerPlan::units)
      .def_property_readonly("layers", &OneLayerPlan::layers)
      .def("text", [](const OneLayerPlan& p) { return plan_text(p); })
      .def("__str__", [](const OneLayerPlan& p) { return plan_text(p); });
}

}  // namespace

void bind_plans(py::module_& m) {
  bind_scan(m);
  bind_kr(m);
  bind_onelayer(m);
}

}  // namespace krc::python
