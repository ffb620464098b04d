#include <deque>
#include <map>
#include <set>

#include "jflap_machine.hpp"
#include "source_lines.hpp"
#include "text.hpp"

namespace krc::frontend {

namespace pt = boost::property_tree;

std::vector<std::size_t> start_tag_lines(const std::string& text, const std::string& tag,
                                         std::size_t from) {
  std::vector<std::size_t> lines;
  from = std::min(from, text.size());
  std::size_t line = line_of(text, from);
  for (std::size_t i = from; i < text.size(); ++i) {
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

namespace {

std::string attribute(const pt::ptree& element, const char* name) {
  return element.get<std::string>(std::string("<xmlattr>.") + name, "");
}

std::string place_at(const std::vector<std::size_t>& lines, std::size_t k,
                     const std::string& fallback) {
  return k < lines.size() ? line_place(lines[k]) : fallback;
}

// The byte where the element <structure type="TYPE"> starts its content, for counting tags
// from there (0 when not found).
std::size_t structure_offset(const std::string& text, const std::string& type) {
  std::size_t at = text.find("type=\"" + type + "\"");
  return at == std::string::npos ? 0 : at;
}

}  // namespace

JflapMachine jflap7_machine(const pt::ptree& structure, const std::string& text,
                            const AutomatonBuilder& b) {
  std::string type = trim(structure.get<std::string>("type", ""));
  if (type.empty()) b.fail("", "not a JFLAP file: <structure> has no <type>");
  if (type != "fa" && type != "mealy" && type != "moore") {
    auto lines = start_tag_lines(text, "type");
    b.fail(lines.empty() ? "<type>" : line_place(lines.front()),
           "JFLAP type '" + type +
               "' is not a finite automaton (krc reads <type>fa</type>, mealy and moore)");
  }
  // JFLAP 7 wraps the states and transitions in <automaton>; older versions do not.
  const pt::ptree& automaton = structure.get_child("automaton", structure);
  const auto state_lines = start_tag_lines(text, "state");
  const auto transition_lines = start_tag_lines(text, "transition");
  JflapMachine m;
  m.outputs = type == "mealy"   ? JflapMachine::Outputs::Mealy
              : type == "moore" ? JflapMachine::Outputs::Moore
                                : JflapMachine::Outputs::None;
  for (const auto& [tag, element] : automaton) {
    if (tag == "state") {
      JflapState s;
      s.place =
          place_at(state_lines, m.states.size(), "state " + std::to_string(m.states.size() + 1));
      s.id = trim(attribute(element, "id"));
      s.name = attribute(element, "name");
      s.initial = element.count("initial") > 0;
      s.final = element.count("final") > 0;
      s.output = trim(element.get<std::string>("output", ""));
      if (s.id.empty()) b.fail(s.place, "a <state> without an id attribute");
      m.states.push_back(std::move(s));
    } else if (tag == "transition") {
      JflapTransition t;
      const std::size_t k = m.transitions.size();
      t.place = place_at(transition_lines, k, "transition " + std::to_string(k + 1));
      for (const char* field : {"from", "to"}) {
        auto value = element.get_optional<std::string>(field);
        if (!value) b.fail(t.place, std::string("a <transition> without <") + field + ">");
        (std::string(field) == "from" ? t.from : t.to) = trim(*value);
      }
      t.read = trim(element.get<std::string>("read", ""));
      t.output = trim(element.get<std::string>("transout", ""));
      m.transitions.push_back(std::move(t));
    }
  }
  return m;
}

namespace {

const std::set<std::string> kJflap8Machines{"fsa", "mealy_machine", "moore_machine"};

// The machine's <structure>: the root or one nested in it (editor_panel > transition_graph >
// fsa), breadth first. Other types are listed in the message when there is none.
const pt::ptree& find_jflap8_machine(const pt::ptree& root, const AutomatonBuilder& b) {
  std::deque<const pt::ptree*> queue{&root};
  std::vector<std::string> types;
  while (!queue.empty()) {
    const pt::ptree* node = queue.front();
    queue.pop_front();
    const std::string type = trim(attribute(*node, "type"));
    if (kJflap8Machines.count(type)) return *node;
    if (!type.empty()) types.push_back("'" + type + "'");
    for (const auto& [tag, child] : *node)
      if (tag == "structure") queue.push_back(&child);
  }
  std::string list;
  for (std::size_t i = 0; i < types.size() && i < 6; ++i) list += (i ? ", " : "") + types[i];
  b.fail("", "a JFLAP 8 file without a finite automaton (structure types " + list +
                 "; krc reads JFLAP 8 'fsa', 'mealy_machine' and 'moore_machine')");
}

// The <id> of a <state> (or <from>/<to>) element, else its <name>.
std::string state_ref(const pt::ptree& element) {
  std::string id = trim(element.get<std::string>("id", ""));
  return id.empty() ? trim(element.get<std::string>("name", "")) : id;
}

}  // namespace

JflapMachine jflap8_machine(const pt::ptree& structure, const std::string& text,
                            const AutomatonBuilder& b) {
  const pt::ptree& machine = find_jflap8_machine(structure, b);
  JflapMachine m;
  std::set<std::string> initial, final;
  for (const auto& [tag, part] : machine) {
    if (tag != "structure") continue;
    const std::string type = trim(attribute(part, "type"));
    if (type == "state_set") {
      const auto lines = start_tag_lines(text, "state", structure_offset(text, type));
      for (const auto& [child_tag, element] : part) {
        if (child_tag != "state") continue;
        JflapState s;
        s.place = place_at(lines, m.states.size(), "state " + std::to_string(m.states.size() + 1));
        s.id = state_ref(element);
        s.name = trim(element.get<std::string>("name", ""));
        if (s.id.empty()) b.fail(s.place, "a <state> without an <id>");
        m.states.push_back(std::move(s));
      }
    } else if (type == "start_state" || type == "final_states") {
      for (const auto& [child_tag, element] : part)
        if (child_tag == "state")
          (type == "start_state" ? initial : final).insert(state_ref(element));
    } else if (type == "transition_set") {
      // Transitions are <fsa_trans> elements (another tag in other machine types): the k-th
      // of a tag is on the line of the k-th such start tag after the set's own.
      std::map<std::string, std::pair<std::vector<std::size_t>, std::size_t>> seen;
      for (const auto& [child_tag, element] : part) {
        if (child_tag == "<xmlattr>") continue;
        auto [it, first] = seen.try_emplace(child_tag);
        if (first)
          it->second.first = start_tag_lines(text, child_tag, structure_offset(text, type));
        JflapTransition t;
        t.place = place_at(it->second.first, it->second.second++,
                           "transition " + std::to_string(m.transitions.size() + 1));
        auto from = element.get_child_optional("from");
        auto to = element.get_child_optional("to");
        if (!from || !to) b.fail(t.place, "a <" + child_tag + "> without <from> and <to>");
        t.from = state_ref(*from);
        t.to = state_ref(*to);
        t.read = trim(element.get<std::string>("input", element.get<std::string>("read", "")));
        m.transitions.push_back(std::move(t));
      }
    }
  }
  for (auto& s : m.states) {
    s.initial = initial.count(s.id) > 0;
    s.final = final.count(s.id) > 0;
  }
  return m;
}

}  // namespace krc::frontend
