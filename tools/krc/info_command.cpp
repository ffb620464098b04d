// `krc info AUT|FILE.safetensors [--json] [--labels]`: what an automaton is (states, state
// graph, semigroup, Krohn-Rhodes decomposition) or what a compiled network is (where it came
// from, its size, which layers implement which level, what its residual stream holds).
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "command.hpp"
#include "krc/automaton_analysis.hpp"
#include "krc/holonomy.hpp"
#include "krc/holonomy_report.hpp"
#include "krc/input_error.hpp"
#include "krc/load_automaton.hpp"
#include "krc/network_summary.hpp"
#include "krc/verifier.hpp"
#include "krc/weights_file.hpp"

namespace krc::cli {

namespace {

struct InfoArguments {
  std::string input, format;
  bool json = false, labels = false, complete = false;
};

bool looks_like_safetensors(const std::string& path) {
  if (path.size() > 12 && path.substr(path.size() - 12) == ".safetensors") return true;
  std::ifstream in(path, std::ios::binary);
  char head[9] = {};
  in.read(head, 9);
  // 8-byte little-endian header length, then the JSON header's opening brace.
  return in.gcount() == 9 && head[8] == '{';
}

// part of the network (role_part: "level 2", "scan", ...) -> layers whose heads or MLP
// blocks serve it, read from the typed roles the compiler recorded.
std::map<std::string, std::set<std::size_t>> layers_by_role(const Network& net) {
  std::map<std::string, std::set<std::size_t>> roles;
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    for (const auto& h : net.layers[i].heads) roles[role_part(h.role)].insert(i);
    if (net.layers[i].mlp)
      for (const auto& b : net.layers[i].mlp->blocks) roles[role_part(b.role)].insert(i);
  }
  return roles;
}

std::string ranges(const std::set<std::size_t>& layers) {
  std::string out;
  for (auto it = layers.begin(); it != layers.end();) {
    std::size_t first = *it, last = *it;
    while (++it != layers.end() && *it == last + 1) last = *it;
    if (!out.empty()) out += ", ";
    out += std::to_string(first) + (last > first ? "-" + std::to_string(last) : "");
  }
  return out;
}

// Residual subspaces in order, as the file records them; a file without them (written by
// another tool) gets one unnamed subspace per dimension label.
std::vector<ResidualSubspace> subspaces(const Network& net) {
  if (!net.subspaces.empty()) return net.subspaces;
  std::vector<ResidualSubspace> out;
  for (std::size_t i = 0; i < net.residual_labels.size(); ++i)
    out.push_back({net.residual_labels[i], static_cast<int>(i), 1, {}});
  return out;
}

// "parallel prefix: integer coordinates form, 10 steps over 55 states, 6,160 hidden units in
// the widest step", from the compiler's plan in the file (kr: one line per scanned level).
std::string scan_lines(const nlohmann::json& compiler) {
  std::vector<std::pair<std::string, nlohmann::json>> scans;
  if (compiler.contains("scan")) scans.emplace_back("", compiler["scan"]);
  if (compiler.contains("cascade") && compiler["cascade"].contains("levels"))
    for (const auto& level : compiler["cascade"]["levels"])
      if (level.contains("scan"))
        scans.emplace_back("level " + level.value("level", nlohmann::json(0)).dump() + ": ",
                           level["scan"]);
  std::string out;
  for (const auto& [where, scan] : scans)
    out += where + "parallel prefix: " + scan.value("form", "?") + " form, " +
           scan.value("steps", nlohmann::json(0)).dump() + " steps over " +
           scan.value("set_size", nlohmann::json(0)).dump() +
           (where.empty() ? " states, " : " values, ") + with_thousands(scan.value("units", 0LL)) +
           " hidden units in the widest step\n";
  return out;
}

int network_info(const InfoArguments& a) {
  const Network net = load_network(a.input);
  const auto roles = layers_by_role(net);
  if (a.json) {
    nlohmann::json out = {{"file", a.input},
                          {"automaton", net.automaton},
                          {"compiler", net.compiler},
                          {"network", network_summary(net)}};
    for (const auto& [role, layers] : roles)
      out["layers_by_role"][role] = std::vector<std::size_t>(layers.begin(), layers.end());
    nlohmann::json spaces = nlohmann::json::array();
    for (const auto& sub : subspaces(net))
      spaces.push_back({{"name", sub.name},
                        {"first", sub.first},
                        {"width", sub.width},
                        {"role", role_to_json(sub.role)}});
    out["residual_subspaces"] = spaces;
    if (a.labels) out["residual_labels"] = net.residual_labels;
    // The file name comes from the command line and need not be UTF-8.
    std::cout << out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::cout << a.input << ": network for automaton '" << net.automaton.value("name", "?") << "' ("
            << net.states.size() << " states, " << net.vocabulary.size() - 1 << " letters)\n";
  std::cout << "compiled by krc " << net.compiler.value("krc_version", "?") << ", strategy "
            << net.compiler.value("strategy", "?") << ", max_len " << net.max_len << ", attention "
            << to_string(net.attention) << "\n";
  std::cout << scan_lines(net.compiler);
  std::cout << "size: " << network_size_line(net) << "\n";
  std::cout << "layers by role:\n";
  for (const auto& [role, layers] : roles)
    std::cout << "  " << role << ": layer" << (layers.size() > 1 ? "s " : " ") << ranges(layers)
              << "\n";
  std::cout << "layers:\n" << network_layers_text(net);
  std::cout << "residual stream (" << net.d_model() << " dimensions):\n";
  if (a.labels) {
    for (std::size_t i = 0; i < net.residual_labels.size(); ++i)
      std::cout << "  " << i << "  " << net.residual_labels[i] << "\n";
  } else {
    for (const auto& sub : subspaces(net))
      std::cout << "  " << sub.name << " (" << sub.width << ")  [" << describe(sub.role) << "]\n";
    std::cout << "(--labels lists every dimension)\n";
  }
  return 0;
}

int automaton_info(const InfoArguments& a) {
  LoadOptions load;
  load.completion.add_sink = a.complete;
  load.format = a.format;
  const Automaton automaton = load_automaton(a.input, load);
  nlohmann::json analysis = analyze_automaton(automaton);
  DecomposeOptions options;
  options.build_tables = false;
  const auto decomposition = HolonomyDecomposition::compute(automaton, options);
  nlohmann::json summary = decomposition_to_json(decomposition);
  summary["semigroup"]["size"] = analysis["semigroup"]["size"];
  summary["semigroup"]["aperiodic"] = analysis["semigroup"]["aperiodic"];
  if (a.json) {
    std::cout << nlohmann::json{{"automaton", analysis}, {"decomposition", summary}}.dump(1)
              << "\n";
    return 0;
  }
  const auto& s = analysis["semigroup"];
  auto show = [](const nlohmann::json& v) {
    if (v.is_null()) return std::string("unknown");
    if (v.is_boolean()) return std::string(v.get<bool>() ? "yes" : "no");
    if (v.is_number_integer()) return with_thousands(v.get<long long>());
    return v.dump();
  };
  const std::string text = decomposition_text(summary);
  const auto first_line = text.find('\n') + 1;
  std::cout << text.substr(0, first_line);
  std::cout << "state graph: initial state " << automaton.state_name(automaton.initial()) << ", "
            << show(analysis["reachable_states"]) << " states reachable from it, "
            << show(analysis["strongly_connected_components"])
            << " strongly connected components\n";
  std::cout << "semigroup: " << show(s["size"]) << " elements (monoid " << show(s["monoid_size"])
            << "), aperiodic: " << show(s["aperiodic"]) << ", group of units of order "
            << show(s["group_of_units_order"]) << "\n";
  std::cout << text.substr(first_line);
  return 0;
}

const RegisterCommand registration{{
    "info",
    "Describe an automaton (semigroup, decomposition) or a compiled network (layers, residual "
    "stream)",
    60,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<InfoArguments>();
      sub.add_option("file", a->input, "An automaton description or a .safetensors weights file")
          ->required();
      sub.add_flag("--json", a->json, "Print JSON");
      sub.add_flag("--labels", a->labels, "For a network: list every residual dimension's label");
      sub.add_flag("--complete", a->complete,
                   "For an automaton: add a sink state to a partial DFA");
      sub.add_option("--format", a->format,
                     "For an automaton: input format when the extension does not tell")
          ->check(CLI::IsMember({"json", "dot", "jff"}));
      return
          [a] { return looks_like_safetensors(a->input) ? network_info(*a) : automaton_info(*a); };
    },
}};

}  // namespace

}  // namespace krc::cli
