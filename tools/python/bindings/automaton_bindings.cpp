// krc.Automaton, krc.load_automaton, krc.parse_automaton, krc.from_regex and the zoo. States and
// letters are names on the Python side; ids stay inside.
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <tuple>
#include <variant>

#include "bindings.hpp"
#include "compile_request.hpp"
#include "krc/automata/automaton_builder.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/machine_outputs.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/frontend/load_automaton.hpp"
#include "krc/frontend/regex_reader.hpp"

namespace krc::python {

namespace {

LoadOptions load_options(const std::optional<std::string>& input_format, bool complete,
                         const std::optional<std::string>& initial, bool no_determinise,
                         long long max_subset_states, const std::optional<std::string>& etf_label) {
  LoadOptions options;
  if (etf_label && etf_label->empty())
    throw py::value_error(
        "etf_label names an edge label of an ETF file: not empty (None: krc's choice)");
  options.etf_label = etf_label.value_or("");
  options.format = input_format.value_or("");
  // The one table of input formats (load_automaton.hpp): the CLI's --input-format choices too.
  const auto names = input_format_names();
  if (!options.format.empty() &&
      std::find(names.begin(), names.end(), options.format) == names.end())
    throw py::value_error("input_format must be None or one of " + input_format_list() +
                          ", not \"" + options.format + "\"");
  options.completion.add_sink = complete;
  options.completion.initial = initial.value_or("");
  options.completion.determinise = !no_determinise;
  if (max_subset_states < 1)
    throw py::value_error("max_subset_states " + std::to_string(max_subset_states) +
                          " is not positive");
  options.completion.max_subset_states = static_cast<std::size_t>(max_subset_states);
  return options;
}

StateId state_id(const Automaton& a, const std::string& name) {
  const long q = a.find_state(name);
  if (q < 0) throw InputError("state", "\"" + name + "\"", "not a state of " + a.name());
  return static_cast<StateId>(q);
}

LetterId letter_id(const Automaton& a, const std::string& name) {
  const long l = a.find_letter(name);
  if (l < 0) throw InputError("word", "letter \"" + name + "\"", "not a letter of " + a.name());
  return static_cast<LetterId>(l);
}

std::vector<std::string> state_names(const Automaton& a, const std::vector<StateId>& states) {
  std::vector<std::string> names;
  for (StateId q : states) names.push_back(a.state_name(q));
  return names;
}

Automaton make_automaton(std::string name, std::vector<std::string> states,
                         std::vector<std::string> letters,
                         std::vector<std::vector<StateId>> transitions, const std::string& initial,
                         const std::vector<std::string>& accepting, std::string description) {
  // Each message names the keyword it is about (issue 33: no message without its argument).
  auto index = [&](const char* keyword, const std::string& state) -> StateId {
    for (std::size_t q = 0; q < states.size(); ++q)
      if (states[q] == state) return static_cast<StateId>(q);
    throw py::value_error(std::string("krc.Automaton: ") + keyword + " \"" + state +
                          "\" is not one of the states");
  };
  const StateId start = index("initial", initial);
  std::vector<StateId> accepting_ids;
  for (const auto& q : accepting) accepting_ids.push_back(index("accepting", q));
  const std::string rows = std::to_string(transitions.size());
  if (transitions.size() != letters.size())
    throw py::value_error("krc.Automaton: transitions has " + rows + " rows for " +
                          std::to_string(letters.size()) + " letters (one row per letter)");
  for (std::size_t a = 0; a < transitions.size(); ++a)
    if (transitions[a].size() != states.size())
      throw py::value_error("krc.Automaton: transitions[" + std::to_string(a) + "] has " +
                            std::to_string(transitions[a].size()) + " entries for " +
                            std::to_string(states.size()) + " states (one per state)");
  return Automaton(std::move(name), std::move(states), std::move(letters), std::move(transitions),
                   start, std::move(accepting_ids), std::move(description));
}

// The Python object of a file's automaton, its Mealy and Moore outputs (and whether it is an
// acceptor) kept beside it: (mealy, moore, acceptor).
py::object with_outputs(Automaton automaton, const MachineOutputs& outputs) {
  py::object object = py::cast(std::move(automaton));
  if (!outputs.mealy.empty() || !outputs.moore.empty() || outputs.acceptor)
    object.attr("_outputs") = py::make_tuple(outputs.mealy, outputs.moore, outputs.acceptor);
  return object;
}

// Reads an automaton by `read` without the GIL, the file's outputs kept on the result, and
// the notes the command line prints (`krc: note: ...`) as `_notes`, which the Python wrappers
// raise as krc.ReadingNote warnings. acceptor: the description is an acceptor whatever its
// states (an object's Dfa with no accepting state answers acceptance, the empty language).
template <typename Read>
py::object read_with_outputs(LoadOptions options, Read read, bool acceptor = false) {
  MachineOutputs outputs;
  std::vector<std::string> notes;
  options.completion.outputs = &outputs;
  options.completion.note = [&notes](const std::string& note) {
    notes.push_back(front_door::spelt_for(front_door::Door::Python, note));  // `initial`
  };
  Automaton automaton = [&] {
    py::gil_scoped_release unlocked;
    return read(options);
  }();
  if (acceptor && outputs.mealy.empty() && outputs.moore.empty()) outputs.acceptor = true;
  py::object object = with_outputs(std::move(automaton), outputs);
  object.attr("_notes") = notes;
  return object;
}

// An automaton handed over as a Python object (krc.from_aalpy, from_automata_lib,
// from_pyformlang): the wrapper has turned it into names and index triples, and the builder
// every reader uses checks and builds it, so that partial acceptors, NFAs, epsilon moves and
// outputs mean what they mean in a file. transitions: (from, letter, to); epsilon: (from, to);
// mealy: (from, letter, output); moore: one output per state, or empty.
struct ObjectDescription {
  std::string file, name;
  std::vector<std::string> states, letters;
  std::vector<std::tuple<StateId, LetterId, StateId>> transitions;
  std::vector<std::pair<StateId, StateId>> epsilon;
  std::vector<StateId> initial, accepting;
  std::vector<std::tuple<StateId, LetterId, std::string>> mealy;
  std::vector<std::string> moore;
};

Automaton build_object(const ObjectDescription& d, const BuildOptions& options) {
  AutomatonBuilder builder(d.file);
  builder.set_name(d.name);
  auto place = [&](StateId q) { return "state '" + d.states.at(q) + "'"; };
  auto check = [&](std::size_t index, std::size_t count, const char* what) {
    if (index >= count)
      builder.fail("", std::string(what) + " index " + std::to_string(index) + " out of range");
  };
  for (std::size_t q = 0; q < d.states.size(); ++q)
    builder.add_state(d.states[q], "state " + std::to_string(q));
  for (std::size_t a = 0; a < d.letters.size(); ++a)
    builder.add_letter(d.letters[a], "letter " + std::to_string(a));
  for (auto [from, letter, to] : d.transitions) {
    check(from, d.states.size(), "state");
    check(to, d.states.size(), "state");
    check(letter, d.letters.size(), "letter");
    builder.add_transition(from, letter, to, place(from));
  }
  for (auto [from, to] : d.epsilon) {
    check(from, d.states.size(), "state");
    check(to, d.states.size(), "state");
    builder.add_epsilon(from, to, place(from));
  }
  for (auto [from, letter, output] : d.mealy) {
    check(from, d.states.size(), "state");
    check(letter, d.letters.size(), "letter");
    builder.add_output(from, letter, output);
  }
  if (!d.moore.empty() && d.moore.size() != d.states.size())
    builder.fail("", "one Moore output per state is needed");
  for (std::size_t q = 0; q < d.moore.size(); ++q)
    builder.set_state_output(static_cast<StateId>(q), d.moore[q]);
  for (StateId q : d.accepting) {
    check(q, d.states.size(), "state");
    builder.add_accepting(q);
  }
  if (d.initial.empty()) builder.fail("", "no initial state");
  for (std::size_t i = 0; i < d.initial.size(); ++i) {
    check(d.initial[i], d.states.size(), "state");
    if (i == 0)
      builder.set_initial(d.initial[i], place(d.initial[i]));
    else
      builder.add_initial(d.initial[i], place(d.initial[i]));
  }
  return builder.build(options);
}

void bind_zoo(py::module_& m) {
  py::class_<ZooFamily>(m, "ZooFamily", "A family of the built-in zoo (`krc zoo` lists them).")
      .def_readonly("name", &ZooFamily::name)
      .def_readonly("description", &ZooFamily::description)
      .def_readonly("parameter", &ZooFamily::parameter, "what n means; empty without one")
      .def_readonly("has_parameter", &ZooFamily::has_parameter)
      .def_readonly("default_n", &ZooFamily::default_n)
      .def_readonly("min_n", &ZooFamily::min_n)
      .def_readonly("max_n", &ZooFamily::max_n)
      .def("__repr__", [](const ZooFamily& f) { return "<krc.ZooFamily " + f.name + ">"; });
  m.def("zoo_families", &zoo_families, "Every family of the zoo, in the order `krc zoo` lists.");
  m.def("zoo_automaton", &zoo_automaton, py::arg("family"), py::arg("n") = py::none(),
        "The zoo automaton of `family` with parameter n (its default when None).");
}

// krc.Automaton: the model, its queries and its pickling (as its native JSON).
void bind_automaton_class(py::module_& m) {
  // dynamic_attr: krc.load_automaton keeps the file's Mealy and Moore outputs on the object
  // (`_outputs`), for krc.compile to answer them as the command line does.
  py::class_<Automaton>(m, "Automaton", py::dynamic_attr(),
                        "A finite semiautomaton: named states and letters, a total transition "
                        "function and an initial state.")
      .def(py::init(&make_automaton), py::arg("name"), py::arg("states"), py::arg("letters"),
           py::arg("transitions"), py::arg("initial"), py::arg("accepting") = py::list(),
           py::arg("description") = "",
           "transitions[a][q] is the index of the state after letter a in state q.")
      .def_property_readonly("name", &Automaton::name)
      .def_property_readonly("description", &Automaton::description)
      .def_property_readonly("states", &Automaton::states)
      .def_property_readonly("letters", &Automaton::letters)
      .def_property_readonly("transitions", &Automaton::transitions,
                             "transitions[a][q]: the index of the state after letter a in q")
      .def_property_readonly("initial",
                             [](const Automaton& a) { return a.state_name(a.initial()); })
      .def_property_readonly("accepting",
                             [](const Automaton& a) { return state_names(a, a.accepting()); })
      .def(
          "step",
          [](const Automaton& a, const std::string& state, const std::string& letter) {
            return a.state_name(a.step(state_id(a, state), letter_id(a, letter)));
          },
          py::arg("state"), py::arg("letter"), "The state after `letter` in `state`.")
      .def(
          "run",
          [](const Automaton& a, const std::vector<std::string>& word,
             const std::optional<std::string>& start) {
            std::vector<LetterId> letters;
            for (const auto& l : word) letters.push_back(letter_id(a, l));
            return state_names(a, a.run(letters, start ? state_id(a, *start) : a.initial()));
          },
          py::arg("word"), py::arg("start") = py::none(),
          "The states after every prefix of `word` (letter names), the first one `start` (by "
          "default the initial state): len(word) + 1 names.")
      .def(
          "to_json", [](const Automaton& a) { return automaton_to_json_text(a); },
          "krc's native JSON description (what krc.load_automaton reads back).")
      .def(py::self == py::self)
      .def(py::pickle(
          [](const py::object& self) {
            return py::make_tuple(automaton_to_json_text(self.cast<const Automaton&>()),
                                  self.attr("__dict__"));
          },
          [](const py::tuple& state) {
            if (state.size() != 2) throw std::runtime_error("krc.Automaton: bad pickle state");
            const std::string text = state[0].cast<std::string>();
            auto automaton = automaton_from_json(nlohmann::json::parse(text), "<pickle>");
            return std::make_pair(std::move(automaton), state[1].cast<py::dict>());
          }))
      .def("__repr__", [](const Automaton& a) {
        return "<krc.Automaton " + a.name() + ": " + std::to_string(a.state_count()) + " states, " +
               std::to_string(a.letter_count()) + " letters>";
      });
}

// The readers: a file (load_automaton) or its text (parse_automaton), with the command line's
// reading options.
void bind_readers(py::module_& m) {
  m.attr("DEFAULT_MAX_SUBSET_STATES") = CompletionOptions{}.max_subset_states;
  m.def(
      "load_automaton",
      [](const std::string& path, const std::optional<std::string>& input_format, bool complete,
         const std::optional<std::string>& initial, bool no_determinise,
         long long max_subset_states, const std::optional<std::string>& etf_label) {
        return read_with_outputs(
            load_options(input_format, complete, initial, no_determinise, max_subset_states,
                         etf_label),
            [&](const LoadOptions& options) { return load_automaton(path, options); });
      },
      py::arg("path"), py::arg("input_format") = py::none(), py::arg("complete") = false,
      py::arg("initial") = py::none(), py::arg("no_determinise") = false,
      py::arg("max_subset_states") = CompletionOptions{}.max_subset_states,
      py::arg("etf_label") = py::none());
  m.def(
      "parse_automaton",
      [](const std::string& text, const std::string& file,
         const std::optional<std::string>& input_format, bool complete,
         const std::optional<std::string>& initial, bool no_determinise,
         long long max_subset_states, const std::optional<std::string>& etf_label) {
        return read_with_outputs(
            load_options(input_format, complete, initial, no_determinise, max_subset_states,
                         etf_label),
            [&](const LoadOptions& options) { return parse_automaton(text, file, options); });
      },
      py::arg("text"), py::arg("file") = "<string>", py::arg("input_format") = py::none(),
      py::arg("complete") = false, py::arg("initial") = py::none(),
      py::arg("no_determinise") = false,
      py::arg("max_subset_states") = CompletionOptions{}.max_subset_states,
      py::arg("etf_label") = py::none());
}

// Automaton objects of other libraries (krc.from_aalpy and the others) described as names
// and index triples, built as the readers build a file's.
void bind_objects(py::module_& m) {
  py::class_<ObjectDescription>(m, "ObjectDescription",
                                "An automaton object's names and index triples (krc.from_aalpy "
                                "and the others fill it for build_automaton).")
      .def(py::init<>())
      .def_readwrite("file", &ObjectDescription::file)
      .def_readwrite("name", &ObjectDescription::name)
      .def_readwrite("states", &ObjectDescription::states)
      .def_readwrite("letters", &ObjectDescription::letters)
      .def_readwrite("transitions", &ObjectDescription::transitions)
      .def_readwrite("epsilon", &ObjectDescription::epsilon)
      .def_readwrite("initial", &ObjectDescription::initial)
      .def_readwrite("accepting", &ObjectDescription::accepting)
      .def_readwrite("mealy", &ObjectDescription::mealy)
      .def_readwrite("moore", &ObjectDescription::moore);
  m.def(
      "build_automaton",
      [](const ObjectDescription& description, bool complete, bool acceptor,
         long long max_subset_states) {
        LoadOptions options = load_options(std::nullopt, complete, std::nullopt, false,
                                           max_subset_states, std::nullopt);
        return read_with_outputs(
            options, [&](const LoadOptions& o) { return build_object(description, o.completion); },
            acceptor);
      },
      py::arg("description"), py::arg("complete") = false, py::arg("acceptor") = false,
      py::arg("max_subset_states") = CompletionOptions{}.max_subset_states,
      "Builds an automaton object's description as the readers build a file's (krc.from_aalpy "
      "and the others): partial acceptors completed, NFAs determinised, outputs kept.");
}

void bind_regex(py::module_& m) {
  m.def(
      "from_regex",
      [](const std::string& pattern,
         const std::optional<std::variant<std::string, std::vector<std::string>>>& alphabet,
         std::size_t max_subset_states) {
        RegexOptions options;
        options.source = "regex";
        options.max_subset_states = max_subset_states;
        // A string is the command line's --alphabet list ("a,b,c"): one rule for both doors.
        if (alphabet && std::holds_alternative<std::string>(*alphabet))
          options.alphabet = parse_alphabet_list(std::get<std::string>(*alphabet), "alphabet");
        else if (alphabet)
          options.alphabet = std::get<std::vector<std::string>>(*alphabet);
        Automaton automaton = [&] {
          py::gil_scoped_release unlocked;
          return regex_automaton(pattern, options);
        }();
        // An acceptor even where no state accepts: compile answers acceptance, as --regex does.
        MachineOutputs outputs;
        outputs.acceptor = true;
        return with_outputs(std::move(automaton), outputs);
      },
      py::arg("pattern"), py::arg("alphabet") = py::none(),
      py::arg("max_subset_states") = RegexOptions{}.max_subset_states);
}

}  // namespace

void bind_automaton(py::module_& m) {
  bind_automaton_class(m);
  bind_readers(m);
  bind_objects(m);
  bind_regex(m);
  bind_zoo(m);
}

}  // namespace krc::python
