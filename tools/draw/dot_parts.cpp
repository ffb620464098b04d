#include "dot_parts.hpp"

#include <map>
#include <set>
#include <sstream>

#include "krc/automata/input_error.hpp"
#include "network_drawing.hpp"

namespace krc::draw_detail {

namespace {

// ---- colours: one per family of roles, the legend's rows

struct Family {
  const char* name;
  const char* colour;
};

const Family kFamilies[] = {
    {"input features", "#e0e0e0"},          // 0
    {"earlier letters", "#cfd8dc"},         // 1
    {"parallel prefix (scan)", "#9ecae1"},  // 2
    {"transition, reset", "#fdae6b"},       // 3
    {"group, counters Z_p", "#a1d99b"},     // 4
    {"memory (latest reset)", "#bcbddc"},   // 5
    {"level coordinate", "#9edae5"},        // 6
    {"clamped walk", "#e7cb94"},            // 7
    {"contextual mapping", "#fbb4c4"},      // 8
    {"decode, state", "#fc9272"},           // 9
    {"unspecified", "#ffffff"},             // 10
};

int family_of(RoleKind kind) {
  switch (kind) {
    case RoleKind::Token:
    case RoleKind::Bos:
    case RoleKind::Constant:
    case RoleKind::PositionCode:
    case RoleKind::Position:
    case RoleKind::LogRemaining:
    case RoleKind::BlockCode:
    case RoleKind::BlockStart:
    case RoleKind::LogRemainingInBlock:
    case RoleKind::LogRemainingBlocks:
      return 0;
    case RoleKind::LetterBack:
      return 1;
    case RoleKind::ScanPrefix:
    case RoleKind::ScanFetch:
    case RoleKind::ScanCompose:
      return 2;
    case RoleKind::Transition:
    case RoleKind::ResetFlag:
    case RoleKind::ResetValue:
      return 3;
    case RoleKind::GroupElement:
    case RoleKind::CounterIncrement:
    case RoleKind::CounterSum:
    case RoleKind::CounterWindowSum:
    case RoleKind::CounterBlockResidue:
    case RoleKind::CounterBlockSum:
    case RoleKind::CounterResidue:
      return 4;
    case RoleKind::Memory:
      return 5;
    case RoleKind::Coordinate:
    case RoleKind::PreviousCoordinate:
      return 6;
    case RoleKind::WalkSum:
    case RoleKind::WalkResidue:
    case RoleKind::LatestVisit:
    case RoleKind::Departure:
    case RoleKind::DepartureUp:
    case RoleKind::LatestDeparture:
      return 7;
    case RoleKind::LetterCode:
    case RoleKind::ContextualValue:
    case RoleKind::ValueThreshold:
      return 8;
    case RoleKind::ValueDecode:
    case RoleKind::Decode:
    case RoleKind::State:
      return 9;
    default:
      return 10;
  }
}

// Which levels of the cascade each layer holds, "level 2: layers 3-5" lines.
std::string level_lines(const Network& net) {
  std::map<int, std::set<int>> layers_of;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    for (const auto& h : net.layers[l].heads)
      if (h.role.level > 0) layers_of[h.role.level].insert(static_cast<int>(l));
    if (net.layers[l].mlp)
      for (const auto& b : net.layers[l].mlp->blocks)
        if (b.role.level > 0) layers_of[b.role.level].insert(static_cast<int>(l));
  }
  std::string out;
  for (const auto& [level, layers] : layers_of) {
    out += "level " + std::to_string(level) + ": layer" + (layers.size() > 1 ? "s " : " ");
    std::string list;
    for (int l : layers) list += (list.empty() ? "" : ", ") + std::to_string(l);
    out += list + "\n";
  }
  return out;
}

}  // namespace

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += "<BR/>";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* colour_of(const Role& role) { return kFamilies[family_of(role.kind)].colour; }

std::string legend_node(const Network& net, bool with_ports) {
  std::set<int> used;
  for (const auto& layer : net.layers) {
    for (const auto& h : layer.heads) used.insert(family_of(h.role.kind));
    if (layer.mlp)
      for (const auto& b : layer.mlp->blocks) used.insert(family_of(b.role.kind));
  }
  for (const auto& s : net.subspaces) used.insert(family_of(s.role.kind));
  std::ostringstream out;
  out << "legend [shape=plaintext, style=\"\", label=<<TABLE BORDER=\"1\" CELLBORDER=\"0\" "
         "CELLSPACING=\"1\" CELLPADDING=\"2\"><TR><TD COLSPAN=\"2\"><B>roles</B></TD></TR>";
  for (int f : used)
    out << "<TR><TD BGCOLOR=\"" << kFamilies[f].colour
        << "\" WIDTH=\"14\"> </TD><TD ALIGN=\"LEFT\">" << html(kFamilies[f].name) << "</TD></TR>";
  if (with_ports)
    out << "<TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\"><FONT COLOR=\"#3182bd\">q read</FONT>  "
           "<FONT COLOR=\"#31a354\">k read</FONT>  <FONT COLOR=\"#e6550d\">v read</FONT>  "
           "<FONT COLOR=\"#636363\">MLP read</FONT>  write</TD></TR>";
  const std::string levels = level_lines(net);
  if (!levels.empty())
    out << "<TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\"><B>cascade</B><BR ALIGN=\"LEFT\"/>"
        << html(levels.substr(0, levels.size() - 1)) << "<BR ALIGN=\"LEFT\"/></TD></TR>";
  out << "</TABLE>>];\n";
  return out.str();
}

std::string title_of(const Network& net) {
  std::string name =
      net.automaton.is_object() ? net.automaton.value("name", std::string("network")) : "network";
  std::string strategy = net.compiler.is_object() && net.compiler.contains("strategy") &&
                                 net.compiler["strategy"].is_string()
                             ? net.compiler["strategy"].get<std::string>()
                             : std::string("?");
  const NetworkSize size = net.size();
  return name + " (" + strategy + "): " + std::to_string(size.layers) + " layers, " +
         std::to_string(size.heads) + " heads, d_model " + std::to_string(size.d_model) +
         ", max_len " + std::to_string(net.max_len);
}

void check_size(const Network& net) {
  long long boxes = 0;
  for (const auto& layer : net.layers) boxes += static_cast<long long>(layer.heads.size()) + 1;
  if (boxes > kMaxDrawnBoxes)
    throw LimitError("the network has " + std::to_string(boxes) +
                     " heads and MLP blocks; krc draws at most " + std::to_string(kMaxDrawnBoxes));
}

const char* const kGraphHeader =
    "  graph [rankdir=LR, newrank=true, fontname=\"Helvetica\", fontsize=12, nodesep=0.12, "
    "ranksep=0.3, "
    "labelloc=t, labeljust=l];\n"
    "  node [fontname=\"Helvetica\", fontsize=9, shape=box, style=\"filled,rounded\", "
    "penwidth=0.8];\n"
    "  edge [arrowsize=0.4, penwidth=0.6];\n";

}  // namespace krc::draw_detail
