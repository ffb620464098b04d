#include "krc/jflap_reader.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <map>
#include <set>
#include <sstream>

#include "krc/input_error.hpp"
#include "source_lines.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

namespace pt = boost::property_tree;
using frontend::line_place;

std::string trim(const std::string& s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// The lines of the start tags <tag ...> in document order, skipping comments, processing
// instructions and CDATA: Boost's XML tree keeps no positions, but it keeps document order,
// so the k-th <state> child is the k-th <state tag here.
std::vector<std::size_t> start_tag_lines(const std::string& text, const std::string& tag) {
  std::vector<std::size_t> lines;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      continue;
    }
    if (text[i] != '<') continue;
    auto skip_to = [&](const char* end) {
      std::size_t stop = text.find(end, i);
      stop = stop == std::string::npos ? text.size() : stop;
      for (; i < stop; ++i) line += text[i] == '\n';
    };
    if (text.compare(i, 4, "<!--") == 0)
      skip_to("-->");
    else if (text.compare(i, 9, "<![CDATA[") == 0)
      skip_to("]]>");
    else if (text.compare(i, 2, "<?") == 0)
      skip_to("?>");
    else if (text.compare(i + 1, tag.size(), tag) == 0) {
      char after = i + 1 + tag.size() < text.size() ? text[i + 1 + tag.size()] : '\0';
      if (after == '>' || after == '/' || after == ' ' || after == '\t' || after == '\n' ||
          after == '\r')
        lines.push_back(line);
    }
  }
  return lines;
}

struct JflapState {
  std::string id, name;
  bool initial = false, final = false;
  std::string place;
};

std::string attribute(const pt::ptree& element, const char* name) {
  return element.get<std::string>(std::string("<xmlattr>.") + name, "");
}

}  // namespace

Automaton read_jflap_automaton(const std::string& text, const std::string& file,
                               const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  pt::ptree document;
  try {
    std::istringstream in(text);
    pt::read_xml(in, document, pt::xml_parser::no_comments);
  } catch (const pt::xml_parser_error& e) {
    b.fail(line_place(e.line() == 0 ? 1 : e.line()), "not valid XML: " + e.message());
  }
  auto structure = document.get_child_optional("structure");
  if (!structure) b.fail("", "not a JFLAP file: the root element must be <structure>");
  std::string type = trim(structure->get<std::string>("type", ""));
  if (type.empty()) b.fail("", "not a JFLAP file: <structure> has no <type>");
  if (type != "fa") {
    auto lines = start_tag_lines(text, "type");
    b.fail(lines.empty() ? "<type>" : line_place(lines.front()),
           "JFLAP type '" + type + "' is not a finite automaton (krc reads <type>fa</type>)");
  }
  // JFLAP 7 wraps the states and transitions in <automaton>; older versions do not.
  const pt::ptree& automaton = structure->get_child("automaton", *structure);

  std::vector<std::size_t> state_lines = start_tag_lines(text, "state");
  std::vector<std::size_t> transition_lines = start_tag_lines(text, "transition");
  auto place_of = [](const std::vector<std::size_t>& lines, std::size_t k,
                     const std::string& fallback) {
    return k < lines.size() ? line_place(lines[k]) : fallback;
  };

  std::vector<JflapState> states;
  for (const auto& [tag, element] : automaton) {
    if (tag == "state") {
      JflapState s;
      s.place = place_of(state_lines, states.size(), "state " + std::to_string(states.size() + 1));
      s.id = trim(attribute(element, "id"));
      s.name = attribute(element, "name");
      s.initial = element.count("initial") > 0;
      s.final = element.count("final") > 0;
      if (s.id.empty()) b.fail(s.place, "a <state> without an id attribute");
      states.push_back(std::move(s));
    }
  }
  if (states.empty()) b.fail("", "the automaton has no states");

  // Names when they are all present and distinct (JFLAP's q0, q1, ...), else the ids.
  std::set<std::string> names;
  bool use_names = true;
  for (const auto& s : states)
    if (s.name.empty() || !names.insert(s.name).second) use_names = false;
  std::map<std::string, StateId> by_id;
  for (const auto& s : states) {
    if (by_id.count(s.id)) b.fail(s.place, "two states have the id '" + s.id + "'");
    const std::string& state_name = use_names ? s.name : s.id;
    if (auto problem = frontend::invalid_utf8_problem(state_name, "state name"))
      b.fail(s.place, *problem);
    StateId q = b.add_state(state_name, s.place);
    by_id.emplace(s.id, q);
    if (s.initial) b.set_initial(q, s.place);
    if (s.final) b.add_accepting(q);
  }

  std::size_t k = 0;
  for (const auto& [tag, element] : automaton) {
    if (tag != "transition") continue;
    std::string place = place_of(transition_lines, k, "transition " + std::to_string(k + 1));
    ++k;
    auto state_at = [&, &element = element](const char* field) {  // clang 14: no captured bindings
      auto value = element.get_optional<std::string>(field);
      if (!value) b.fail(place, std::string("a <transition> without <") + field + ">");
      auto it = by_id.find(trim(*value));
      if (it == by_id.end())
        b.fail(place, std::string("<") + field + "> names state id '" + trim(*value) +
                          "', which no <state> has");
      return it->second;
    };
    StateId from = state_at("from"), to = state_at("to");
    std::string letter = trim(element.get<std::string>("read", ""));
    if (letter.empty())
      b.fail(place,
             "an empty <read> (an epsilon transition): a DFA reads one letter per transition");
    if (auto problem = frontend::invalid_utf8_problem(letter, "letter")) b.fail(place, *problem);
    b.add_transition(from, b.letter(letter, place), to, place);
  }
  bool has_initial = false;
  for (const auto& s : states) has_initial = has_initial || s.initial;
  if (!has_initial) b.fail("", "no initial state: no <state> has <initial/>");
  return b.build(options);
}

}  // namespace krc
