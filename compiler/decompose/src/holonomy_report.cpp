#include "krc/decompose/holonomy_report.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "krc/automata/input_error.hpp"
#include "krc/automata/transformation_semigroup.hpp"

namespace krc {

namespace {

std::string set_label(const Automaton& automaton, const std::vector<StateId>& states) {
  std::string label = "{";
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (i) label += ",";
    label += automaton.state_name(states[i]);
  }
  return label + "}";
}

// A DOT double-quoted string.
std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

std::string component_text(const nlohmann::json& component) {
  const auto& group = component.at("group");
  std::string tiles = std::to_string(component.at("tiles").get<int>());
  if (group.at("order").get<std::uint64_t>() == 1) return tiles;
  return "(" + tiles + "," + group.at("name").get<std::string>() + ")";
}

std::string yes_no_unknown(const nlohmann::json& value) {
  if (value.is_null()) return "unknown";
  return value.get<bool>() ? "yes" : "no";
}

// "256", or "more than 100000" past the enumeration limit, or "unknown".
std::string semigroup_size_text(const nlohmann::json& semigroup) {
  const auto size = semigroup.value("size", nlohmann::json());
  if (!size.is_null()) return size.dump();
  if (semigroup.contains("size_limit")) return "more than " + semigroup.at("size_limit").dump();
  return "unknown";
}

}  // namespace

nlohmann::json decomposition_to_json(const HolonomyDecomposition& h) {
  const Automaton& automaton = h.automaton();
  const Skeleton& sk = h.skeleton();
  nlohmann::json out;
  out["automaton"] = {{"name", automaton.name()},
                      {"states", automaton.state_count()},
                      {"letters", automaton.letter_count()}};
  out["semigroup"] = {{"size", nullptr}, {"aperiodic", nullptr}, {"solvable", h.solvable()}};
  std::size_t singleton_images = 0;
  for (std::size_t c = 0; c < sk.class_count(); ++c)
    if (sk.is_singleton_class(static_cast<int>(c)))
      singleton_images += sk.class_members(static_cast<int>(c)).size();
  out["skeleton"] = {{"images", h.image_count()},
                     {"classes", h.class_count()},
                     {"depth", h.skeleton_depth()},
                     {"singleton_images", singleton_images},
                     {"tile_chains", h.chain_count()}};
  nlohmann::json levels = nlohmann::json::array();
  for (int d = 0; d < h.level_count(); ++d) {
    const Level& level = h.level(d);
    nlohmann::json components = nlohmann::json::array();
    for (const Slot& slot : level.slots) {
      nlohmann::json names = nlohmann::json::array();
      for (StateId q : slot.representative) names.push_back(automaton.state_name(q));
      components.push_back({{"representative", names},
                            {"tiles", slot.tiles.size()},
                            {"class", slot.subduction_class},
                            {"group",
                             {{"order", slot.group.order},
                              {"name", slot.group.name},
                              {"factors", slot.group.factors},
                              {"solvable", slot.group.solvable},
                              {"exact", slot.group.exact}}}});
    }
    levels.push_back({{"level", d + 1},
                      {"states", level.width},
                      {"dummy", level.dummy >= 0},
                      {"components", components}});
  }
  out["levels"] = levels;
  if (h.has_tables()) out["cascade"] = {{"reachable_tuples", h.reachable().size()}};
  return out;
}

std::size_t semigroup_enumeration_limit(const Automaton& automaton, std::size_t max_elements) {
  const std::size_t work =
      std::max<std::size_t>(1, automaton.letter_count() * automaton.state_count());
  return std::min(max_elements, std::size_t{200'000'000} / work);
}

void add_semigroup_facts(nlohmann::json& summary, const HolonomyDecomposition& h,
                         std::size_t max_elements) {
  auto& semigroup = summary["semigroup"];
  const std::size_t limit = semigroup_enumeration_limit(h.automaton(), max_elements);
  semigroup["size_limit"] = limit;
  semigroup["solvable"] = h.solvable();
  try {
    auto s = TransformationSemigroup::generate(h.automaton(), false, limit);
    semigroup["size"] = s.semigroup_size();
    semigroup["aperiodic"] = s.is_aperiodic();
  } catch (const LimitError&) {
    semigroup["size"] = nullptr;
    semigroup["aperiodic"] = h.aperiodic();
    semigroup["aperiodic_from"] = "holonomy groups";
  }
}

std::string decomposition_text(const nlohmann::json& summary) {
  std::ostringstream text;
  const auto& automaton = summary.at("automaton");
  const auto& skeleton = summary.at("skeleton");
  const auto& semigroup = summary.at("semigroup");
  text << "automaton " << automaton.at("name").get<std::string>() << ": " << automaton.at("states")
       << " states, " << automaton.at("letters") << " letters\n";
  text << "skeleton: " << skeleton.at("images") << " images in " << skeleton.at("classes")
       << " subduction classes, depth " << skeleton.at("depth") << "\n";
  for (const auto& level : summary.at("levels")) {
    text << level.at("level") << ":";
    for (const auto& component : level.at("components")) text << " " << component_text(component);
    text << "\n";
  }
  text << "levels: " << summary.at("levels").size()
       << ", solvable: " << yes_no_unknown(semigroup.at("solvable"))
       << ", aperiodic: " << yes_no_unknown(semigroup.value("aperiodic", nlohmann::json()))
       << ", semigroup size: " << semigroup_size_text(semigroup) << "\n";
  if (summary.contains("cascade"))
    text << "cascade: " << summary.at("cascade").at("reachable_tuples")
         << " reachable coordinate tuples\n";
  return text.str();
}

std::string decomposition_to_text(const HolonomyDecomposition& h) {
  return decomposition_text(decomposition_to_json(h));
}

namespace {

// "class c", with its slot's tile count and group when it has a slot.
std::string class_label(const HolonomyDecomposition& h, int c) {
  const std::string label = "class " + std::to_string(c);
  for (int d = 0; d < h.level_count(); ++d)
    for (const Slot& slot : h.level(d).slots)
      if (slot.subduction_class == c)
        return label + ": " + std::to_string(slot.tiles.size()) + " tiles, group " +
               slot.group.name;
  return label;
}

}  // namespace

std::string decomposition_to_dot(const HolonomyDecomposition& h, std::size_t max_sets) {
  const Skeleton& sk = h.skeleton();
  const Automaton& automaton = h.automaton();
  if (sk.set_count() > max_sets)
    throw LimitError("the skeleton of '" + automaton.name() + "' has " +
                     std::to_string(sk.set_count()) + " sets, too many to draw (limit " +
                     std::to_string(max_sets) + ")");
  std::ostringstream dot;
  dot << "digraph skeleton {\n"
      << "  label=" << quoted("holonomy skeleton of " + automaton.name()) << ";\n"
      << "  labelloc=t;\n  rankdir=TB;\n  compound=true;\n"
      << "  node [shape=box, fontname=\"Helvetica\"];\n";
  // Group classes by depth; non-image singletons sit with the singletons at the bottom.
  std::map<int, std::vector<int>> classes_at_depth;
  for (std::size_t c = 0; c < sk.class_count(); ++c)
    classes_at_depth[sk.class_depth(static_cast<int>(c))].push_back(static_cast<int>(c));
  std::vector<std::size_t> lonely_singletons;
  for (std::size_t e = sk.image_count(); e < sk.set_count(); ++e) lonely_singletons.push_back(e);
  const int bottom = sk.depth_of_skeleton();
  auto node = [&](std::size_t e, bool representative, bool image) {
    dot << "      s" << e << " [label=" << quoted(set_label(automaton, sk.states_of(e)));
    if (representative) dot << ", style=bold";
    if (!image) dot << ", style=dashed";
    dot << "];\n";
  };
  std::vector<int> depths;
  for (const auto& [depth, _] : classes_at_depth) depths.push_back(depth);
  if (!lonely_singletons.empty() && (depths.empty() || depths.back() != bottom))
    depths.push_back(bottom);
  for (int depth : depths) {
    dot << "  subgraph cluster_depth_" << depth << " {\n"
        << "    label="
        << quoted(depth < bottom
                      ? "depth " + std::to_string(depth) + " (level " + std::to_string(depth) + ")"
                      : "depth " + std::to_string(depth) + " (singletons)")
        << ";\n    style=dashed;\n";
    for (int c : classes_at_depth[depth]) {
      dot << "    subgraph cluster_class_" << c << " {\n      label=" << quoted(class_label(h, c))
          << ";\n      style=solid;\n";
      for (std::size_t e : sk.class_members(c)) node(e, e == sk.representative(c), true);
      dot << "    }\n";
    }
    if (depth == bottom)
      for (std::size_t e : lonely_singletons) node(e, false, false);
    dot << "  }\n";
  }
  for (std::size_t e = 0; e < sk.image_count(); ++e)
    for (std::uint32_t t : sk.tiles(e)) dot << "  s" << e << " -> s" << t << ";\n";
  dot << "}\n";
  return dot.str();
}

}  // namespace krc
