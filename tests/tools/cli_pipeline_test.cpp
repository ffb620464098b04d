// The whole pipeline through the krc command, as a user runs it: compile zoo automata with
// every strategy, verify the files, run words through them, describe them. The oracles are
// independent of the code under test: the Automaton itself (run in the test), the weights
// file's header read by hand from the README's definition, and counting words by formula.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "krc/automata/automaton_json.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;
using test::contains;
using test::with_commas;
namespace fs = std::filesystem;

namespace {

fs::path zoo_file(const std::string& stem) {
  return test::source_dir() / "automata" / "zoo" / (stem + ".json");
}

Automaton zoo_automaton(const std::string& stem) {
  auto path = zoo_file(stem);
  return automaton_from_json(json::parse(test::read_text(path)), path.string());
}

// What a weights file holds, read straight from its bytes as the README defines them
// (8-byte little-endian header length, JSON header; sparse tensors' dense shapes in the
// "sparse" metadata), not through krc's reader.
struct FileShape {
  int layers = 0, d_model = 0, heads = 0;
  long long mlp_hidden_total = 0, parameters = 0;
  json automaton;
};

FileShape read_file_shape(const std::string& path) {
  const std::string bytes = test::read_text(path);
  REQUIRE(bytes.size() >= 8);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  REQUIRE(n <= bytes.size() - 8);
  const json header = json::parse(bytes.substr(8, n));
  const json& metadata = header.at("__metadata__");
  const json sparse = metadata.contains("sparse")
                          ? json::parse(metadata["sparse"].get<std::string>())
                          : json::object();

  std::map<std::string, std::vector<long long>> shapes;  // dense shape of every logical tensor
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    auto dot = name.rfind('.');
    std::string base = dot == std::string::npos ? name : name.substr(0, dot);
    std::string suffix = dot == std::string::npos ? "" : name.substr(dot + 1);
    if (sparse.contains(base) && (suffix == "indices" || suffix == "values"))
      shapes[base] = sparse[base].get<std::vector<long long>>();
    else
      shapes[name] = entry.at("shape").get<std::vector<long long>>();
  }
  FileShape shape;
  std::set<int> layers;
  static const std::regex layer_tensor(R"(^layers\.(\d+)\.)");
  for (const auto& [name, dims] : shapes) {
    long long count = 1;
    for (long long d : dims) count *= d;
    if (name.find(".attn.") == std::string::npos)
      shape.parameters += count;  // heads: below, without padding
    std::smatch m;
    if (std::regex_search(name, m, layer_tensor)) layers.insert(std::stoi(m[1].str()));
    if (name == "embed.token") shape.d_model = static_cast<int>(dims.at(1));
    if (name.size() > 7 && name.substr(name.size() - 7) == ".attn.q")
      shape.heads += static_cast<int>(dims.at(0));
    if (name.size() > 12 && name.substr(name.size() - 12) == ".mlp.in.bias")
      shape.mlp_hidden_total += dims.at(0);
  }
  shape.layers = layers.empty() ? 0 : *layers.rbegin() + 1;
  // krc counts a head's parameters at its own widths (query_dim for q and k, value_dim for v
  // and o), not at the zero-padded head_dim the tensors share.
  const json config = json::parse(metadata.at("config").get<std::string>());
  for (const auto& layer : config.at("layers"))
    for (const auto& head : layer.at("heads"))
      shape.parameters +=
          2LL * shape.d_model *
          (head.at("query_dim").get<long long>() + head.at("value_dim").get<long long>());
  shape.automaton = json::parse(metadata.at("automaton").get<std::string>());
  return shape;
}

// The default exhaustive length as README's "Verifying" defines it: the longest length with
// at most 100,000 words, at most max_len.
int default_exhaustive_length(long long letters, int max_len) {
  int length = 0;
  long long words = 1;
  while (length < max_len && words * letters <= 100000) {
    words *= letters;
    ++length;
  }
  return length;
}

long long power(long long base, int exponent) {
  long long p = 1;
  for (int i = 0; i < exponent; ++i) p *= base;
  return p;
}

std::vector<std::string> names_of_states(const Automaton& a, const std::vector<StateId>& states) {
  std::vector<std::string> names;
  for (StateId q : states) names.push_back(a.state_name(q));
  return names;
}

constexpr int kMaxLen = 64;
constexpr long long kRandomWords = 50;

void check_compile(const Automaton& automaton, const std::string& input,
                   const std::string& strategy, const std::string& out) {
  auto r = test::run_krc(
      {"compile", input, "--strategy", strategy, "--max-len", std::to_string(kMaxLen), "-o", out});
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(fs::exists(out));
  const FileShape shape = read_file_shape(out);
  CHECK(automaton_from_json(shape.automaton, out) == automaton);
  // The size line describes the file that was written.
  CHECK(contains(r.out, "network: " + std::to_string(shape.layers) +
                            (shape.layers == 1 ? " layer" : " layers")));
  CHECK(contains(r.out, "d_model " + std::to_string(shape.d_model)));
  CHECK(contains(r.out, std::to_string(shape.heads) + (shape.heads == 1 ? " head" : " heads")));
  if (shape.mlp_hidden_total > 0)
    CHECK(contains(r.out, "(total " + with_commas(shape.mlp_hidden_total) + ")"));
  else
    CHECK_FALSE(contains(r.out, "MLP hidden"));
  CHECK(contains(r.out, with_commas(shape.parameters) + " parameters"));
  CHECK(contains(r.out, "(" + with_commas(static_cast<long long>(fs::file_size(out))) + " bytes)"));
  CHECK(contains(r.out, automaton.name()));
}

void check_compile_json(const Automaton& automaton, const std::string& input,
                        const std::string& strategy, const std::string& out) {
  auto r = test::run_krc({"compile", input, "--strategy", strategy, "--max-len",
                          std::to_string(kMaxLen), "-o", out, "--json"});
  REQUIRE(r.status == 0);
  const json summary = json::parse(r.out);
  const FileShape shape = read_file_shape(out);
  CHECK(summary["automaton"]["name"] == automaton.name());
  CHECK(summary["automaton"]["states"] == automaton.state_count());
  CHECK(summary["automaton"]["letters"] == automaton.letter_count());
  if (strategy != "auto") CHECK(summary["strategy"] == strategy);
  CHECK(summary["output"] == out);
  CHECK(summary["bytes"] == fs::file_size(out));
  CHECK(summary["network"]["layers"] == shape.layers);
  CHECK(summary["network"]["d_model"] == shape.d_model);
  CHECK(summary["network"]["heads"] == shape.heads);
  CHECK(summary["network"]["parameters"] == shape.parameters);
  CHECK(summary["network"]["max_len"] == kMaxLen);
}

void check_verify(const Automaton& automaton, const std::string& file) {
  auto r = test::run_krc({"verify", file, "--random", std::to_string(kRandomWords), "--json"});
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  const json report = json::parse(r.out);
  const long long k = static_cast<long long>(automaton.letter_count());
  const int length = default_exhaustive_length(k, kMaxLen);
  const long long exhaustive_words = power(k, length);
  long long covered = 0;
  for (int l = 0; l <= length; ++l) covered += power(k, l);
  CHECK(report["ok"] == true);
  CHECK(report["wrong_positions"] == 0);
  CHECK(report["wrong_words"] == 0);
  CHECK(report["counterexample"].is_null());
  CHECK(report["exhaustive"]["length"] == length);
  CHECK(report["exhaustive"]["words"] == exhaustive_words);
  CHECK(report["exhaustive"]["covered_words"] == covered);
  CHECK(report["random"]["words"] == kRandomWords);
  CHECK(report["random"]["length"] == kMaxLen);
  CHECK(report["words"] == exhaustive_words + kRandomWords);
  // Every position of every word, position 0 (<bos>) included.
  CHECK(report["positions"] == exhaustive_words * (length + 1) + kRandomWords * (kMaxLen + 1));
  CHECK(report["smallest_margin"].get<double>() > 0.0);
}

// One random word of max_len letters, its states computed by the automaton.
void check_run(const Automaton& automaton, const std::string& file, std::mt19937_64& rng) {
  std::vector<LetterId> word(kMaxLen);
  std::uniform_int_distribution<LetterId> letter(
      0, static_cast<LetterId>(automaton.letter_count() - 1));
  for (auto& l : word) l = letter(rng);
  const std::vector<std::string> expected = names_of_states(automaton, automaton.run(word));

  std::vector<std::string> args{"run", file};
  for (LetterId l : word) args.push_back(automaton.letter_name(l));
  auto text = test::run_krc(args);
  REQUIRE(text.status == 0);
  // Columns: position, letter, state, margin, automaton; the first line is the header.
  std::istringstream lines(text.out);
  std::string line;
  std::getline(lines, line);
  std::size_t t = 0;
  for (; std::getline(lines, line); ++t) {
    CAPTURE(line);
    REQUIRE(t < expected.size());
    std::istringstream fields(line);
    std::string position, letter, state, margin, according_to_automaton, rest;
    fields >> position >> letter >> state >> margin >> according_to_automaton;
    CHECK(position == std::to_string(t));
    CHECK(letter == (t == 0 ? "<bos>" : automaton.letter_name(word[t - 1])));
    CHECK(state == expected[t]);
    CHECK(according_to_automaton == expected[t]);
    CHECK_FALSE(static_cast<bool>(fields >> rest));  // no "<- differs"
  }
  CHECK(t == expected.size());

  args.push_back("--json");
  auto as_json = test::run_krc(args);
  REQUIRE(as_json.status == 0);
  const json out = json::parse(as_json.out);
  CHECK(out["states"] == expected);
  CHECK(out["expected"] == expected);
  CHECK(out["letters"].size() == word.size());
}

void check_info_network(const Automaton& automaton, const std::string& file) {
  auto text = test::run_krc({"info", file});
  REQUIRE(text.status == 0);
  CHECK(contains(text.out, "'" + automaton.name() + "'"));
  auto as_json = test::run_krc({"info", file, "--json"});
  REQUIRE(as_json.status == 0);
  const json out = json::parse(as_json.out);
  CHECK(automaton_from_json(out["automaton"], file) == automaton);
  CHECK(out["network"]["layers"] == read_file_shape(file).layers);
}

void check_info_automaton(const Automaton& automaton, const std::string& input) {
  auto text = test::run_krc({"info", input});
  REQUIRE(text.status == 0);
  CHECK(contains(text.out, automaton.name()));
  CHECK(contains(text.out, "initial state " + automaton.state_name(automaton.initial())));
  auto as_json = test::run_krc({"info", input, "--json"});
  REQUIRE(as_json.status == 0);
  const json out = json::parse(as_json.out);
  CHECK(out["automaton"]["name"] == automaton.name());
  CHECK(out["automaton"]["states"] == automaton.state_count());
  CHECK(out["automaton"]["letters"] == automaton.letter_count());
}

// compile -> verify -> run -> info for every strategy, and auto's choice against the other two.
void check_pipeline(const std::string& stem) {
  const Automaton automaton = zoo_automaton(stem);
  const std::string input = zoo_file(stem).string();
  test::TempDir dir;
  std::mt19937_64 rng(std::hash<std::string>{}(stem));
  std::map<std::string, FileShape> shapes;
  for (const std::string strategy : {"scan", "kr", "auto"}) {
    CAPTURE(strategy);
    const std::string file = (dir / (stem + "-" + strategy + ".safetensors")).string();
    check_compile(automaton, input, strategy, file);
    check_compile_json(automaton, input, strategy,
                       (dir / (stem + "-" + strategy + "-json.safetensors")).string());
    check_verify(automaton, file);
    check_run(automaton, file, rng);
    check_info_network(automaton, file);
    shapes[strategy] = read_file_shape(file);
  }
  // auto keeps the strategy with fewer layers, ties broken by fewer parameters.
  const FileShape &scan = shapes["scan"], &kr = shapes["kr"], &chosen = shapes["auto"];
  CHECK(chosen.layers == std::min(scan.layers, kr.layers));
  if (scan.layers == kr.layers)
    CHECK(chosen.parameters == std::min(scan.parameters, kr.parameters));
  check_info_automaton(automaton, input);
}

}  // namespace

TEST_CASE("pipeline through the krc command: parity") { check_pipeline("parity"); }
TEST_CASE("pipeline through the krc command: flipflop_3") { check_pipeline("flipflop_3"); }
TEST_CASE("pipeline through the krc command: gridworld_4") { check_pipeline("gridworld_4"); }
TEST_CASE("pipeline through the krc command: quaternion") { check_pipeline("quaternion"); }
TEST_CASE("pipeline through the krc command: abab") { check_pipeline("abab"); }

TEST_CASE("--help works for krc and every subcommand it lists") {
  auto top = test::run_krc({"--help"});
  REQUIRE(top.status == 0);
  // CLI11 lists subcommands, indented, after "Subcommands:".
  auto at = top.out.find("Subcommands:");
  REQUIRE(at != std::string::npos);
  std::istringstream lines(top.out.substr(at));
  std::string line;
  std::getline(lines, line);
  std::set<std::string> listed;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    if (line.empty() || line[0] != ' ' || !(words >> name)) break;
    listed.insert(name);
  }
  // At least the ones the design promises.
  for (const char* expected : {"zoo", "compile", "verify", "run", "info", "decompose", "bench"})
    CHECK(listed.count(expected) == 1);
  for (const auto& name : listed) {
    CAPTURE(name);
    auto help = test::run_krc({name, "--help"});
    CHECK(help.status == 0);
    CHECK(contains(help.out, name));
    CHECK(contains(help.out, "Usage:"));
    CHECK(help.err.empty());
  }
}

// The cascade summary of `krc compile --strategy kr` names each level's units by what the
// algebra says they must be: a flip-flop's only level has the trivial group (no counter) and
// resets (a memory unit); a cyclic group automaton has one Z_p counter and no resets.
TEST_CASE("krc compile --strategy kr: the cascade lines name counters and memory units") {
  test::TempDir dir;
  auto level_lines = [&](const std::string& stem) {
    auto r = test::run_krc({"compile", zoo_file(stem).string(), "--strategy", "kr", "--max-len",
                            "16", "-o", (dir / (stem + ".safetensors")).string()});
    REQUIRE(r.status == 0);
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (contains(line, "level ")) lines.push_back(line);
    return lines;
  };
  auto flipflop = level_lines("flipflop_2");
  REQUIRE(flipflop.size() == 1);
  CHECK(contains(flipflop[0], "memory unit"));
  CHECK_FALSE(contains(flipflop[0], "counters"));
  auto cyclic = level_lines("cyclic_5");
  REQUIRE(cyclic.size() == 1);
  CHECK(contains(cyclic[0], "counters Z5"));
  CHECK_FALSE(contains(cyclic[0], "memory unit"));

  // The components of each level read as krc decompose prints them ("k: (tiles,group) ...",
  // the tile count alone for a trivial group).
  // (gridworld_4 is no cascade any more: kr builds it as a clamped walk, its one plan line
  // naming the path's cells and the letters' moves.)
  auto walk = test::run_krc({"compile", zoo_file("gridworld_4").string(), "--strategy", "kr",
                             "--max-len", "16", "-o", (dir / "gridworld_4.safetensors").string()});
  REQUIRE(walk.status == 0);
  CHECK(contains(walk.out, "cascade: clamped walk, 2 layers"));
  CHECK(contains(walk.out, "clamped walk on 4 cells"));
  CHECK(contains(walk.out, "(unit steps)"));
  for (const char* stem : {"flipflop_2", "abab", "full_transformations_3", "dihedral_3"}) {
    CAPTURE(stem);
    auto decomposed = test::run_krc({"decompose", zoo_file(stem).string(), "-q"});
    REQUIRE(decomposed.status == 0);
    std::istringstream in(decomposed.out);
    std::vector<std::string> expected;
    for (std::string line; std::getline(in, line);)
      if (std::regex_match(line, std::regex(R"(\d+: .*)")))
        expected.push_back("level " + line + "  ");
    const auto lines = level_lines(stem);
    REQUIRE(lines.size() == expected.size());
    for (std::size_t i = 0; i < lines.size(); ++i) CHECK(contains(lines[i], expected[i]));
  }

  // The same plan in --json.
  auto cascade = [&](const std::string& stem) {
    auto r = test::run_krc({"compile", zoo_file(stem).string(), "--strategy", "kr", "--max-len",
                            "16", "-o", (dir / (stem + ".safetensors")).string(), "--json"});
    REQUIRE(r.status == 0);
    return json::parse(r.out).at("cascade").at("levels");
  };
  const json ff = cascade("flipflop_2"), c5 = cascade("cyclic_5");
  REQUIRE(ff.size() == 1);
  CHECK(ff[0]["mode"] == "memory");
  CHECK(ff[0]["resets"] == true);
  REQUIRE(c5.size() == 1);
  CHECK(c5[0]["mode"] == "counters");
  CHECK(c5[0]["resets"] == false);
  CHECK(c5[0]["counters"] == json::array({json::array({5})}));
}

// `krc info FILE` on a kr network says which layers implement which level: every level of the
// cascade has a line, and no head or MLP block is left unassigned ("other").
TEST_CASE("krc info: layers by role name every level of a kr network") {
  test::TempDir dir;
  for (const char* stem : {"gridworld_4", "full_transformations_3", "abab"}) {
    CAPTURE(stem);
    const std::string file = (dir / (std::string(stem) + ".safetensors")).string();
    auto compiled = test::run_krc({"compile", zoo_file(stem).string(), "--strategy", "kr",
                                   "--max-len", "32", "-o", file, "--json"});
    REQUIRE(compiled.status == 0);
    const auto levels = json::parse(compiled.out).at("cascade").at("levels").size();
    auto info = test::run_krc({"info", file});
    REQUIRE(info.status == 0);
    const auto roles_at = info.out.find("layers by role:");
    REQUIRE(roles_at != std::string::npos);
    const std::string roles = info.out.substr(roles_at, info.out.find("\nlayers:") - roles_at);
    for (std::size_t level = 1; level <= levels; ++level)
      CHECK(contains(roles, "  level " + std::to_string(level) + ": layer"));
    CHECK_FALSE(contains(roles, "other"));
  }
}
