// `krc info AUT|--regex P|FILE.safetensors [--json] [--labels]`: what an automaton is (states,
// state graph, semigroup, Krohn-Rhodes decomposition) or what a compiled network is (where it came
// from, its size, which layers implement which level, what its residual stream holds).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "automaton_input.hpp"
#include "command.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_analysis.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/decompose/holonomy.hpp"
#include "krc/decompose/holonomy_report.hpp"
#include "krc/frontend/load_automaton.hpp"
#include "krc/runtime/network_summary.hpp"
#include "krc/runtime/weights_file.hpp"
#include "precision_line.hpp"

namespace krc::cli {

namespace {

struct InfoArguments {
  std::string input;
  LoadOptions load;
  bool json = false, labels = false;
  std::size_t max_elements = kDefaultReportElements;
  std::size_t max_images = DecomposeOptions{}.max_images;
  std::size_t max_image_mib = DecomposeOptions{}.max_image_bytes >> 20;
};

// A string member of the optional, informational metadata, or "?" when it is missing or is
// something else: a file may carry any JSON there.
std::string text_member(const nlohmann::json& document, const char* key) {
  if (!document.is_object()) return "?";
  const auto it = document.find(key);
  return it != document.end() && it->is_string() ? it->get<std::string>() : "?";
}

// A weights file or an automaton description? The extension decides when it is one krc
// knows; otherwise the content: a safetensors file opens with an 8-byte little-endian header
// length that fits in the file, then the header's '{'. A text file cannot look like that:
// its eighth byte is printable, which makes the length at least 2^56 ("digraph {" has '{'
// as its ninth byte too, and used to be taken for weights).
bool looks_like_safetensors(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (auto& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".safetensors") return true;
  if (extension == ".json" || extension == ".dot" || extension == ".gv" || extension == ".jff" ||
      extension == ".hoa" || extension == ".aut")
    return false;
  std::ifstream in(path, std::ios::binary);
  unsigned char head[9] = {};
  in.read(reinterpret_cast<char*>(head), 9);
  if (in.gcount() != 9 || head[8] != '{') return false;
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = length << 8 | head[i];
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return !ec && length >= 2 && length <= size - 8;
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
std::string scan_lines_of(const nlohmann::json& compiler) {
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

// The compiler's notes are informational and a file may carry any JSON there: lines only
// where they have the expected types.
std::string scan_lines(const nlohmann::json& compiler) {
  try {
    return scan_lines_of(compiler);
  } catch (const nlohmann::json::exception&) {
    return "";
  }
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
  std::cout << a.input << ": network for automaton '" << text_member(net.automaton, "name") << "' ("
            << net.states.size() << " states, " << net.vocabulary.size() - 1 << " letters)\n";
  std::cout << "compiled by krc " << text_member(net.compiler, "krc_version") << ", strategy "
            << text_member(net.compiler, "strategy") << ", max_len " << net.max_len
            << ", attention " << to_string(net.attention) << "\n";
  std::cout << scan_lines(net.compiler);
  std::cout << precision_line(net.compiler);
  std::cout << certified_line(net.compiler);
  std::cout << "size: " << network_size_line(net) << "\n";
  if (net.layers.empty()) {
    // An automaton without letters: the embedding of <bos> is read by the unembedding.
    std::cout << "layers: none (" << empty_alphabet_clause() << ")\n";
  } else {
    std::cout << "layers by role:\n";
    for (const auto& [role, layers] : roles)
      std::cout << "  " << role << ": layer" << (layers.size() > 1 ? "s " : " ") << ranges(layers)
                << "\n";
    std::cout << "layers:\n" << network_layers_text(net);
  }
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
  const Automaton automaton = load_automaton(a.input, a.load);
  // The semigroup facts come from add_semigroup_facts, as krc decompose computes them, and
  // the analysis enumerates with the same limit: the two commands never disagree.
  nlohmann::json analysis =
      analyze_automaton(automaton, semigroup_enumeration_limit(automaton, a.max_elements));
  DecomposeOptions options;
  options.build_tables = false;
  options.max_images = a.max_images;
  options.max_image_bytes = a.max_image_mib << 20;
  nlohmann::json summary;
  std::string decomposition_problem;
  try {
    const auto decomposition = HolonomyDecomposition::compute(automaton, options);
    summary = decomposition_to_json(decomposition);
    add_semigroup_facts(summary, decomposition, a.max_elements);
    analysis["semigroup"]["size"] = summary["semigroup"]["size"];
    analysis["semigroup"]["aperiodic"] = summary["semigroup"]["aperiodic"];
    analysis["semigroup"]["element_limit"] = summary["semigroup"]["size_limit"];
  } catch (const DecomposeLimitError& e) {
    // What the automaton is does not depend on its decomposition: say why it is missing.
    decomposition_problem = std::string(e.what()) + "; " + decompose_limit_hint(e);
  }
  if (a.json) {
    nlohmann::json out{{"automaton", analysis}, {"decomposition", summary}};
    if (!decomposition_problem.empty()) out["decomposition_error"] = decomposition_problem;
    std::cout << out.dump(1) << "\n";
    return 0;
  }
  const auto& s = analysis["semigroup"];
  auto show = [](const nlohmann::json& v) {
    if (v.is_null()) return std::string("unknown");
    if (v.is_boolean()) return std::string(v.get<bool>() ? "yes" : "no");
    if (v.is_number_integer()) return with_thousands(v.get<long long>());
    return v.dump();
  };
  std::cout << "automaton " << automaton.name() << ": " << automaton.state_count() << " states, "
            << automaton.letter_count() << " letters\n";
  std::cout << "state graph: initial state " << automaton.state_name(automaton.initial()) << ", "
            << show(analysis["reachable_states"]) << " states reachable from it, "
            << show(analysis["strongly_connected_components"])
            << " strongly connected components\n";
  const std::string size =
      s["size"].is_null() ? "more than " + show(s["element_limit"]) : show(s["size"]);
  std::cout << "semigroup: " << size << " elements (monoid " << show(s["monoid_size"])
            << "), aperiodic: " << show(s["aperiodic"]) << ", group of units of order "
            << show(s["group_of_units_order"]) << "\n";
  if (!decomposition_problem.empty()) {
    std::cout << "decomposition: out of reach: " << decomposition_problem << "\n";
    return 0;
  }
  const std::string text = decomposition_text(summary);
  std::cout << text.substr(text.find('\n') + 1);
  return 0;
}

const RegisterCommand info_registration{{
    "info",
    "Describe an automaton (semigroup, decomposition) or a compiled network (layers, residual "
    "stream)",
    60,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<InfoArguments>();
      CLI::Option* file = sub.add_option("file", a->input,
                                         "An automaton description or a .safetensors weights file")
                              ->required();
      sub.add_flag("--json", a->json, "Print JSON");
      sub.add_flag("--labels", a->labels, "For a network: list every residual dimension's label");
      add_automaton_input_options(sub, a->load, file);
      refuse_format_option(sub);
      sub.add_option("--max-elements", a->max_elements,
                     "For an automaton: enumerate the transformation semigroup up to this many "
                     "elements (as krc decompose)")
          ->capture_default_str();
      sub.add_option("--max-images", a->max_images,
                     "For an automaton: limit on the images of the state set (as krc decompose)")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
      sub.add_option("--max-image-memory", a->max_image_mib,
                     "For an automaton: limit on the memory the images take, in MiB")
          ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24))
          ->capture_default_str();
      return [a] {
        return !a->load.regex && looks_like_safetensors(a->input) ? network_info(*a)
                                                                  : automaton_info(*a);
      };
    },
}};

}  // namespace

}  // namespace krc::cli
