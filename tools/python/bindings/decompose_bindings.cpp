// krc.decompose: the holonomy (Krohn-Rhodes) decomposition as objects. Levels and components
// name their states; the skeleton, which may hold millions of sets, answers by index.
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>

#include "bindings.hpp"
#include "errors.hpp"
#include "interrupt_scope.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/decompose/holonomy.hpp"
#include "krc/decompose/holonomy_report.hpp"
#include "network_drawing.hpp"

namespace krc::python {

namespace {

struct Component {
  std::vector<std::string> representative;
  std::vector<std::vector<std::string>> tiles;
  GroupInfo group;
  int subduction_class = -1;
};

struct LevelView {
  int level = 0;  // 1-based, as printed
  int width = 0;
  std::optional<int> dummy;
  std::vector<Component> components;
};

struct Decomposition {
  std::shared_ptr<const HolonomyDecomposition> holonomy;
  std::vector<LevelView> levels;
};

std::vector<std::string> names(const Automaton& a, const std::vector<StateId>& states) {
  std::vector<std::string> out;
  for (StateId q : states) out.push_back(a.state_name(q));
  return out;
}

Decomposition view(HolonomyDecomposition&& computed) {
  Decomposition d{std::make_shared<const HolonomyDecomposition>(std::move(computed)), {}};
  const Automaton& a = d.holonomy->automaton();
  for (int i = 0; i < d.holonomy->level_count(); ++i) {
    const Level& level = d.holonomy->level(i);
    LevelView v{i + 1, level.width, std::nullopt, {}};
    if (level.dummy >= 0) v.dummy = level.dummy;
    for (const Slot& slot : level.slots) {
      Component c{names(a, slot.representative), {}, slot.group, slot.subduction_class};
      for (const auto& tile : slot.tiles) c.tiles.push_back(names(a, tile));
      v.components.push_back(std::move(c));
    }
    d.levels.push_back(std::move(v));
  }
  return d;
}

// The option of each limit by its Python name, with its setting, as `krc decompose` names its own.
[[noreturn]] void rethrow_with_option(const DecomposeLimitError& e) {
  using Limit = DecomposeLimitError::Limit;
  const char* option = e.limit() == Limit::MaxImages       ? "max_images"
                       : e.limit() == Limit::MaxImageBytes ? "max_image_memory"
                       : e.limit() == Limit::MaxTuples     ? "max_tuples"
                                                           : "max_table_cells";
  std::string hint = std::string("; ") + option + "= (now " +
                     with_thousands(static_cast<long long>(e.value())) + ") raises the limit";
  if (e.limit() == Limit::MaxTuples || e.limit() == Limit::MaxTableCells)
    hint += "; tables=False skips the action tables";
  throw OptionLimitError(e.what() + hint, option);
}

Decomposition decompose(const Automaton& automaton, bool tables, std::size_t max_images,
                        std::size_t max_image_memory, std::size_t max_tuples,
                        std::size_t max_table_cells) {
  DecomposeOptions options;
  options.build_tables = tables;
  options.max_images = max_images;
  options.max_image_bytes = max_image_memory;
  options.max_tuples = max_tuples;
  options.max_table_cells = max_table_cells;
  InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
  py::gil_scoped_release unlocked;
  try {
    return view(HolonomyDecomposition::compute(automaton, options));
  } catch (const DecomposeLimitError& e) {
    rethrow_with_option(e);
  }
}

// The summary `krc decompose --format json` prints, the semigroup's facts included (computed
// within max_elements, the command's --max-elements).
nlohmann::json summary_of(const Decomposition& d, std::size_t max_elements) {
  if (max_elements < 1) throw py::value_error("max_elements must be at least 1");
  InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
  py::gil_scoped_release unlocked;
  nlohmann::json summary = decomposition_to_json(*d.holonomy);
  add_semigroup_facts(summary, *d.holonomy, max_elements);
  return summary;
}

// The text `krc decompose` prints.
std::string text_of(const Decomposition& d, std::size_t max_elements) {
  return decomposition_text(summary_of(d, max_elements));
}

// The Graphviz text `krc decompose --format dot` prints (--max-drawn-sets: max_sets).
std::string dot_of(const Decomposition& d, std::size_t max_sets) {
  if (max_sets < 1) throw py::value_error("max_sets must be at least 1");
  try {
    return decomposition_to_dot(*d.holonomy, max_sets);
  } catch (const LimitError& e) {
    throw OptionLimitError(std::string(e.what()) + "; max_sets (now " + std::to_string(max_sets) +
                               ") raises the limit",
                           "max_sets");
  }
}

// A set or class index checked against the skeleton's count: ValueError naming the argument
// (an index past the end read past the tables before).
std::size_t set_index(const Skeleton& s, long long e) {
  if (e < 0 || static_cast<unsigned long long>(e) >= s.set_count())
    throw py::value_error("krc.Skeleton: set " + std::to_string(e) + " is not in [0, " +
                          std::to_string(s.set_count()) + ")");
  return static_cast<std::size_t>(e);
}

int class_index(const Skeleton& s, long long c) {
  if (c < 0 || static_cast<unsigned long long>(c) >= s.class_count())
    throw py::value_error("krc.Skeleton: cls " + std::to_string(c) + " is not in [0, " +
                          std::to_string(s.class_count()) + ")");
  return static_cast<int>(c);
}

void bind_skeleton(py::module_& m) {
  py::class_<Skeleton>(m, "Skeleton",
                       "The holonomy skeleton: the sets E (images of the state set first, then "
                       "the singletons that are not images) by index; states are indices into "
                       "Automaton.states.")
      .def_property_readonly("set_count", &Skeleton::set_count)
      .def_property_readonly("image_count", &Skeleton::image_count)
      .def_property_readonly("class_count", &Skeleton::class_count)
      .def_property_readonly("depth", &Skeleton::depth_of_skeleton)
      .def(
          "states_of", [](const Skeleton& s, long long e) { return s.states_of(set_index(s, e)); },
          py::arg("set"))
      .def(
          "is_image", [](const Skeleton& s, long long e) { return s.is_image(set_index(s, e)); },
          py::arg("set"))
      .def(
          "depth_of", [](const Skeleton& s, long long e) { return s.depth(set_index(s, e)); },
          py::arg("set"))
      .def(
          "class_of", [](const Skeleton& s, long long e) { return s.class_of(set_index(s, e)); },
          py::arg("set"), "-1 for a non-image singleton")
      .def(
          "class_depth",
          [](const Skeleton& s, long long c) { return s.class_depth(class_index(s, c)); },
          py::arg("cls"))
      .def(
          "representative",
          [](const Skeleton& s, long long c) { return s.representative(class_index(s, c)); },
          py::arg("cls"))
      .def(
          "class_members",
          [](const Skeleton& s, long long c) { return s.class_members(class_index(s, c)); },
          py::arg("cls"))
      .def(
          "tiles",
          [](const Skeleton& s, long long e) {
            auto t = s.tiles(set_index(s, e));
            return std::vector<std::uint32_t>(t.begin(), t.end());
          },
          py::arg("set"), "The tiles of a set, as set indices (empty for a singleton)")
      .def(
          "successor",
          [](const Skeleton& s, long long e, long long a) {
            const std::size_t set = set_index(s, e);
            if (a < 0 || static_cast<unsigned long long>(a) >= s.letter_count())
              throw py::value_error("krc.Skeleton.successor: letter " + std::to_string(a) +
                                    " is not in [0, " + std::to_string(s.letter_count()) + ")");
            return s.successor(set, static_cast<LetterId>(a));
          },
          py::arg("set"), py::arg("letter"), "The set's image under a letter (by index)");
}

// Decomposition.draw: the picture `krc decompose --draw -o PATH` writes, through the one writer.
void draw_to_path(const Decomposition& d, const py::object& path_like) {
  const py::module_ os = py::module_::import("os");
  if (!py::isinstance<py::str>(path_like) && !py::isinstance(path_like, os.attr("PathLike")))
    throw py::type_error("Decomposition.draw: path must be a path (str or os.PathLike), not " +
                         std::string(py::str(py::type::of(path_like).attr("__name__"))));
  const std::string path = py::str(os.attr("fspath")(path_like));
  const DrawFormat format = draw_format_from_path(path);
  std::string picture;
  {
    py::gil_scoped_release unlocked;
    picture = draw_decomposition(decomposition_to_json(*d.holonomy), format);
  }
  // Through the one writer, as Network.draw writes.
  py::module_::import("krc._core")
      .attr("write_file")(path, py::bytes(picture), std::vector<std::string>{}, "path");
}

// The cascade's coordinates: a state's, back to a state, one step.
void bind_coordinates(py::class_<Decomposition>& cls) {
  cls.def(
         "encode",
         [](const Decomposition& d, const std::string& state) {
           const long q = d.holonomy->automaton().find_state(state);
           if (q < 0)
             throw py::value_error("krc.Decomposition.encode: state \"" + state +
                                   "\" is not a state");
           return d.holonomy->encode(static_cast<StateId>(q));
         },
         py::arg("state"), "The coordinates of a state, one value per level")
      .def(
          "decode",
          [](const Decomposition& d, const Coordinates& c) {
            try {
              return d.holonomy->automaton().state_name(d.holonomy->decode(c));
            } catch (const std::invalid_argument& e) {
              throw py::value_error(std::string("krc.Decomposition.decode: coordinates: ") +
                                    e.what());
            }
          },
          py::arg("coordinates"))
      .def(
          "apply",
          [](const Decomposition& d, const Coordinates& c, const std::string& letter) {
            const long a = d.holonomy->automaton().find_letter(letter);
            if (a < 0)
              throw py::value_error("krc.Decomposition.apply: letter \"" + letter +
                                    "\" is not a letter");
            try {
              return d.holonomy->apply(c, static_cast<LetterId>(a));
            } catch (const std::invalid_argument& e) {
              throw py::value_error(std::string("krc.Decomposition.apply: coordinates: ") +
                                    e.what());
            }
          },
          py::arg("coordinates"), py::arg("letter"), "One step of the cascade");
}

// The reports `krc decompose` prints: text, JSON, DOT and the picture.
void bind_reports(py::class_<Decomposition>& cls) {
  cls.def("text", &text_of, py::arg("max_elements") = kDefaultReportElements,
          "One line per level, as `krc decompose` prints (like SgpDec); the semigroup's size "
          "is counted up to max_elements (--max-elements)")
      .def(
          "to_json",
          [](const Decomposition& d, std::size_t max_elements) {
            const std::string text = summary_of(d, max_elements).dump();
            return py::module_::import("json").attr("loads")(text);
          },
          py::arg("max_elements") = kDefaultReportElements,
          "The summary `krc decompose --format json` prints, as Python values (dict)")
      .def("to_dot", &dot_of, py::arg("max_sets") = kDefaultDrawnSets,
           "The Graphviz text `krc decompose --format dot` prints; max_sets (--max-drawn-sets) "
           "bounds the sets drawn")
      .def("draw", &draw_to_path, py::arg("path"),
           "Writes the picture of the levels `krc decompose --draw -o PATH` writes, the same "
           "bytes, its format from the extension (.svg, .png, or .dot for the Graphviz graph): "
           "level 1 on top, one box per component with its tiles, class, representative and "
           "group")
      .def("__str__", [](const Decomposition& d) { return text_of(d, kDefaultReportElements); });
}

}  // namespace

void bind_decompose(py::module_& m) {
  py::class_<GroupInfo>(m, "Group", "A holonomy group: order, name, composition factors.")
      .def_readonly("order", &GroupInfo::order)
      .def_readonly("name", &GroupInfo::name, "as GAP's StructureDescription: \"S3\", \"C2 x C2\"")
      .def_readonly("factors", &GroupInfo::factors, "composition factor orders, sorted")
      .def_readonly("solvable", &GroupInfo::solvable)
      .def_readonly("exact", &GroupInfo::exact)
      .def("__repr__", [](const GroupInfo& g) { return "<krc.Group " + g.name + ">"; });
  py::class_<Component>(m, "Component", "One component (slot) of a level.")
      .def_readonly("representative", &Component::representative)
      .def_readonly("tiles", &Component::tiles)
      .def_readonly("group", &Component::group)
      .def_readonly("subduction_class", &Component::subduction_class);
  py::class_<LevelView>(m, "DecompositionLevel", "One level of the holonomy cascade.")
      .def_readonly("level", &LevelView::level, "1-based: level 1 is read first")
      .def_readonly("width", &LevelView::width, "coordinate values, the dummy included")
      .def_readonly("dummy", &LevelView::dummy, "the value of chains that skip the level")
      .def_readonly("components", &LevelView::components);
  bind_skeleton(m);
  py::class_<Decomposition> decomposition(m, "Decomposition",
                                          "The holonomy decomposition of an automaton.");
  decomposition
      .def_property_readonly("automaton",
                             [](const Decomposition& d) { return d.holonomy->automaton(); })
      .def_readonly("levels", &Decomposition::levels)
      .def_property_readonly(
          "skeleton",
          [](const Decomposition& d) -> const Skeleton& { return d.holonomy->skeleton(); },
          py::return_value_policy::reference_internal)
      .def_property_readonly("solvable",
                             [](const Decomposition& d) { return d.holonomy->solvable(); })
      .def_property_readonly("aperiodic",
                             [](const Decomposition& d) { return d.holonomy->aperiodic(); })
      .def_property_readonly("has_tables",
                             [](const Decomposition& d) { return d.holonomy->has_tables(); })
      .def_property_readonly(
          "reachable", [](const Decomposition& d) { return d.holonomy->reachable(); },
          "every reachable coordinate tuple (needs the tables)");
  bind_coordinates(decomposition);
  bind_reports(decomposition);
  const DecomposeOptions defaults;
  m.def("decompose", &decompose, py::arg("automaton"), py::arg("tables") = true,
        py::arg("max_images") = defaults.max_images,
        py::arg("max_image_memory") = defaults.max_image_bytes,
        py::arg("max_tuples") = defaults.max_tuples,
        py::arg("max_table_cells") = defaults.max_table_cells);
}

}  // namespace krc::python
