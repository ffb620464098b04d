// The levels picture of a holonomy decomposition (`krc decompose --draw`,
// krc.Decomposition.draw): drawn from the JSON summary, so the picture names what the report
// names.
#include <sstream>
#include <stdexcept>

#include "dot_parts.hpp"
#include "krc/automata/input_error.hpp"
#include "network_drawing.hpp"

namespace krc {

using namespace draw_detail;

namespace {

// "{a, b, c}"
std::string state_set(const nlohmann::json& names) {
  std::string out = "{";
  for (const auto& name : names) out += (out.size() > 1 ? ", " : "") + name.get<std::string>();
  return out + "}";
}

// One component's box: its label as decomposition_text prints it, (tiles,group) or the tile
// count for a trivial group, then its class, representative and group.
void component_box(std::ostream& out, const std::string& id, const nlohmann::json& c) {
  const nlohmann::json& group = c["group"];
  const long long order = group.value("order", 1LL);
  const std::string name = group.value("name", std::string("1"));
  const std::string tiles = std::to_string(c["tiles"].get<long long>());
  const std::string component = order == 1 ? tiles : "(" + tiles + "," + name + ")";
  out << "    " << quoted(id) << " [shape=plaintext, style=\"\", label=<<TABLE BORDER=\"1\" "
      << "CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"3\" BGCOLOR=\""
      << (order == 1                      ? "#eeeeee"
          : group.value("solvable", true) ? "#cfe8fc"
                                          : "#fcd9cf")
      << "\"><TR><TD><B>" << html(component) << "</B></TD></TR><TR><TD><FONT POINT-SIZE=\"9\">"
      << "class " << c["class"].get<long long>() << ", " << tiles << " tiles</FONT></TD></TR>"
      << "<TR><TD><FONT POINT-SIZE=\"9\">representative " << html(state_set(c["representative"]))
      << "</FONT></TD></TR><TR><TD><FONT POINT-SIZE=\"9\">group " << html(name) << ", order "
      << order << (group.value("solvable", true) ? "" : ", not solvable")
      << "</FONT></TD></TR></TABLE>>];\n";
}

}  // namespace

std::string decomposition_levels_dot(const nlohmann::json& summary) {
  if (!summary.is_object() || !summary.contains("levels") || !summary["levels"].is_array())
    throw std::invalid_argument("not a decomposition summary (no \"levels\" list)");
  const nlohmann::json& levels = summary.at("levels");
  long long boxes = 0;
  for (const auto& level : levels) boxes += static_cast<long long>(level.at("components").size());
  if (boxes > kMaxDrawnBoxes)
    throw LimitError("a decomposition of " + std::to_string(boxes) +
                     " components is too large to draw (at most " + std::to_string(kMaxDrawnBoxes) +
                     ")");
  const nlohmann::json& automaton = summary.at("automaton");
  std::ostringstream out;
  out << "digraph krc_levels {\n" << kGraphHeader;
  out << "  rankdir=TB; compound=true;\n  label="
      << quoted("holonomy decomposition of " + automaton.at("name").get<std::string>() + ": " +
                std::to_string(automaton.at("states").get<long long>()) + " states, " +
                std::to_string(automaton.at("letters").get<long long>()) + " letters, " +
                std::to_string(levels.size()) + (levels.size() == 1 ? " level" : " levels") +
                " (level 1 on top; each level acts " +
                "on its coordinate given the letter and the levels above)")
      << ";\n";
  std::string previous;
  for (const auto& level : levels) {
    const std::string L = std::to_string(level.at("level").get<long long>());
    out << "  subgraph cluster_level" << L << " {\n    label="
        << quoted("level " + L + ": " + std::to_string(level.at("states").get<long long>()) +
                  " states" + (level.value("dummy", false) ? " (with the dummy)" : ""))
        << "; style=\"rounded\"; color=\"#999999\"; fontsize=11;\n";
    std::string first;
    std::size_t i = 0;
    for (const auto& component : level.at("components")) {
      const std::string id = "level" + L + ".c" + std::to_string(i++);
      component_box(out, id, component);
      if (first.empty()) first = id;
    }
    if (first.empty()) {  // a level with no component still gets a place
      first = "level" + L + ".empty";
      out << "    " << quoted(first) << " [shape=plaintext, label=\"(no component)\"];\n";
    }
    out << "  }\n";
    if (!previous.empty())
      out << "  " << quoted(previous) << " -> " << quoted(first)
          << " [ltail=" << quoted("cluster_level" + std::to_string(std::stoll(L) - 1))
          << ", lhead=" << quoted("cluster_level" + L) << "];\n";
    previous = first;
  }
  out << "}\n";
  return out.str();
}

std::string draw_decomposition(const nlohmann::json& summary, DrawFormat format) {
  return render_dot(decomposition_levels_dot(summary), format);
}

}  // namespace krc
