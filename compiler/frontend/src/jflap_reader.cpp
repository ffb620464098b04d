#include "krc/frontend/jflap_reader.hpp"

#include <boost/property_tree/ptree.hpp>
#include <map>
#include <set>
#include <sstream>

#include "jflap_machine.hpp"
#include "krc/automata/input_error.hpp"
#include "source_lines.hpp"
#include "utf8.hpp"
#include "xml_nesting.hpp"

namespace krc {

namespace {

namespace pt = boost::property_tree;
using frontend::line_place;

// JFLAP writes an empty output (nothing to print) as an empty element and shows it as λ.
std::string output_name(const std::string& output) { return output.empty() ? "λ" : output; }

// States and transitions of either layout, checked and built into the automaton.
Automaton build(AutomatonBuilder& b, const frontend::JflapMachine& m,
                const CompletionOptions& options) {
  if (m.states.empty()) b.fail("", "the automaton has no states");
  // Names when they are all present and distinct (JFLAP's q0, q1, ...), else the ids.
  std::set<std::string> names;
  bool use_names = true;
  for (const auto& s : m.states)
    if (s.name.empty() || !names.insert(s.name).second) use_names = false;
  std::map<std::string, StateId> by_id;
  for (const auto& s : m.states) {
    if (by_id.count(s.id)) b.fail(s.place, "two states have the id '" + s.id + "'");
    const std::string& state_name = use_names ? s.name : s.id;
    if (auto problem = frontend::invalid_utf8_problem(state_name, "state name"))
      b.fail(s.place, *problem);
    StateId q = b.add_state(state_name, s.place);
    by_id.emplace(s.id, q);
    if (s.initial) b.add_initial(q, s.place);  // several: an NFA from all of them
    if (s.final) b.add_accepting(q);
    if (m.outputs == frontend::JflapMachine::Outputs::Moore)
      b.set_state_output(q, output_name(s.output));
  }
  for (const auto& t : m.transitions) {
    auto state_at = [&](const std::string& id, const char* field) {
      auto it = by_id.find(id);
      if (it == by_id.end())
        b.fail(t.place,
               std::string("<") + field + "> names state id '" + id + "', which no <state> has");
      return it->second;
    };
    StateId from = state_at(t.from, "from"), to = state_at(t.to, "to");
    if (t.read.empty()) {  // epsilon (JFLAP's lambda): the builder determinises
      b.add_epsilon(from, to, t.place);
      continue;
    }
    if (auto problem = frontend::invalid_utf8_problem(t.read, "letter")) b.fail(t.place, *problem);
    const LetterId letter = b.letter(t.read, t.place);
    b.add_transition(from, letter, to, t.place);
    if (m.outputs == frontend::JflapMachine::Outputs::Mealy)
      b.add_output(from, letter, output_name(t.output));
  }
  return b.build(options);  // no <initial/>: the first <state> is initial
}

}  // namespace

Automaton read_jflap_automaton(const std::string& text, const std::string& file,
                               const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  const pt::ptree document = frontend::read_xml_document(text, b, "JFLAP files");
  auto structure = document.get_child_optional("structure");
  if (!structure) b.fail("", "not a JFLAP file: the root element must be <structure>");
  // JFLAP 8 gives the root <structure> a type attribute; JFLAP 4-7 a <type> element.
  const bool jflap8 = structure->get_child_optional("<xmlattr>.type").has_value();
  return build(b,
               jflap8 ? frontend::jflap8_machine(*structure, text, b)
                      : frontend::jflap7_machine(*structure, text, b),
               options);
}

}  // namespace krc
