// The reports: the JSON summary's shape (an interface), the SgpDec-style text lines built
// from the reference file, the DOT skeleton read back by Boost.Graph, and `krc decompose`.
#include <doctest/doctest.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "krc/automata/automaton_json.hpp"
#include "krc/decompose/holonomy.hpp"
#include "krc/decompose/holonomy_report.hpp"
#include "test_support.hpp"

namespace {

nlohmann::json reference() {
  return nlohmann::json::parse(
      krc::test::read_text(krc::test::reference_dir() / "sgpdec_holonomy.json"));
}

std::string reference_file(const std::string& name) {
  return (krc::test::reference_dir() / "automata" / (name + ".json")).string();
}

krc::Automaton reference_automaton(const std::string& name) {
  return krc::automaton_from_json(nlohmann::json::parse(krc::test::read_text(reference_file(name))),
                                  reference_file(name));
}

// SgpDec's display: "(tiles,name)" per component, the tile count alone for a trivial group.
std::string expected_level_line(const nlohmann::json& components, int level) {
  std::multiset<std::string> parts;
  for (const auto& c : components)
    if (c.at("level").get<int>() == level)
      parts.insert(c.at("order").get<int>() == 1 ? std::to_string(c.at("tiles").get<int>())
                                                 : "(" + std::to_string(c.at("tiles").get<int>()) +
                                                       "," + c.at("name").get<std::string>() + ")");
  std::string line = std::to_string(level) + ":";
  for (const auto& p : parts) line += " " + p;
  return line;
}

}  // namespace

TEST_CASE("the JSON summary has the agreed shape and the decomposition's values") {
  for (const auto& name : krc::test::reference_automaton_names()) {
    CAPTURE(name);
    auto automaton = reference_automaton(name);
    auto h = krc::HolonomyDecomposition::compute(automaton);
    nlohmann::json j = krc::decomposition_to_json(h);
    CHECK(j.at("automaton").at("name") == name);
    CHECK(j.at("automaton").at("states") == automaton.state_count());
    CHECK(j.at("automaton").at("letters") == automaton.letter_count());
    CHECK(j.at("semigroup").at("size").is_null());
    CHECK(j.at("semigroup").at("aperiodic").is_null());
    CHECK(j.at("semigroup").at("solvable") == h.solvable());
    CHECK(j.at("skeleton").at("images") == reference()[name].at("images"));
    CHECK(j.at("skeleton").at("classes").is_number_integer());
    CHECK(j.at("skeleton").at("depth") == reference()[name].at("levels").get<int>() + 1);
    REQUIRE(j.at("levels").size() == static_cast<std::size_t>(h.level_count()));
    for (int d = 0; d < h.level_count(); ++d) {
      const auto& level = j.at("levels")[static_cast<std::size_t>(d)];
      CHECK(level.at("level") == d + 1);
      CHECK(level.at("states") == h.level(d).width);
      REQUIRE(level.at("components").size() == h.level(d).slots.size());
      for (std::size_t s = 0; s < h.level(d).slots.size(); ++s) {
        const auto& c = level.at("components")[s];
        const auto& slot = h.level(d).slots[s];
        std::vector<std::string> names;
        for (auto q : slot.representative) names.push_back(automaton.state_name(q));
        CHECK(c.at("representative") == names);
        CHECK(c.at("tiles") == slot.tiles.size());
        CHECK(c.at("group").at("order") == slot.group.order);
        CHECK(c.at("group").at("name") == slot.group.name);
        CHECK(c.at("group").at("factors") == slot.group.factors);
        CHECK(c.at("group").at("solvable") == slot.group.solvable);
      }
    }
  }
}

TEST_CASE("the text form prints SgpDec's level lines") {
  auto ref = reference();
  for (const auto& name : krc::test::reference_automaton_names()) {
    CAPTURE(name);
    std::string text =
        krc::decomposition_to_text(krc::HolonomyDecomposition::compute(reference_automaton(name)));
    // Components of one level may come in another order than SgpDec's: compare as multisets.
    std::istringstream lines(text);
    std::map<int, std::string> ours;
    for (std::string line; std::getline(lines, line);) {
      auto colon = line.find(':');
      if (colon == std::string::npos || line.find_first_not_of("0123456789") != colon) continue;
      int level = std::stoi(line.substr(0, colon));
      std::istringstream parts(line.substr(colon + 1));
      std::multiset<std::string> sorted;
      for (std::string p; parts >> p;) sorted.insert(p);
      std::string normal = std::to_string(level) + ":";
      for (const auto& p : sorted) normal += " " + p;
      ours[level] = normal;
    }
    int levels = ref[name].at("levels").get<int>();
    CHECK(ours.size() == static_cast<std::size_t>(levels));
    for (int d = 1; d <= levels; ++d)
      CHECK(ours[d] == expected_level_line(ref[name].at("components"), d));
  }
}

TEST_CASE("the DOT skeleton is valid Graphviz with one node per set and one edge per tile") {
  for (const std::string name :
       {"abab", "gridworld_9", "full_transformations_4", "symmetric_3", "flipflop_3"}) {
    CAPTURE(name);
    auto h = krc::HolonomyDecomposition::compute(reference_automaton(name));
    std::string dot = krc::decomposition_to_dot(h);
    using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                        boost::property<boost::vertex_name_t, std::string>>;
    Graph g;
    boost::dynamic_properties dp(boost::ignore_other_properties);
    dp.property("node_id", boost::get(boost::vertex_name, g));
    REQUIRE(boost::read_graphviz(dot, g, dp, "node_id"));
    std::size_t tiles = 0;
    for (std::size_t e = 0; e < h.image_count(); ++e) tiles += h.skeleton().tiles(e).size();
    CHECK(boost::num_vertices(g) == h.skeleton().set_count());
    CHECK(boost::num_edges(g) == tiles);
  }
}

TEST_CASE("krc decompose: formats, output file, semigroup facts") {
  auto ref = reference();
  auto text = krc::test::run_krc({"decompose", reference_file("full_transformations_4")});
  CHECK(text.status == 0);
  CHECK(text.out.find("1: (4,S4)\n2: (3,S3)\n3: (2,C2)\n") != std::string::npos);
  for (const std::string name :
       {"abab", "full_transformations_5", "gridworld_9", "alternating_5"}) {
    CAPTURE(name);
    auto json = krc::test::run_krc({"decompose", reference_file(name), "--format", "json"});
    REQUIRE(json.status == 0);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j.at("semigroup").at("size") == ref[name].at("semigroup_size"));
    CHECK(j.at("levels").size() == ref[name].at("levels").get<std::size_t>());
  }
  // Over the enumeration limit the size is null and aperiodicity comes from the groups.
  auto limited = krc::test::run_krc(
      {"decompose", reference_file("gridworld_9"), "--format", "json", "--max-elements", "10"});
  REQUIRE(limited.status == 0);
  auto j = nlohmann::json::parse(limited.out);
  CHECK(j.at("semigroup").at("size").is_null());
  CHECK(j.at("semigroup").at("aperiodic") == true);
  krc::test::TempDir dir;
  auto dot = krc::test::run_krc(
      {"decompose", reference_file("abab"), "--format", "dot", "-o", (dir / "abab.dot").string()});
  CHECK(dot.status == 0);
  CHECK(krc::test::read_text(dir / "abab.dot").rfind("digraph skeleton {", 0) == 0);
}

TEST_CASE("krc decompose: bad input and limits exit 2 with a message and no output file") {
  krc::test::TempDir dir;
  {
    std::ofstream bad(dir / "bad.json");
    bad << "{\"states\": [\"a\"], \"alphabet\": [\"x\"], \"initial\": \"a\", \"transitions\": "
           "{\"x\": [\"b\"]}}";
  }
  auto bad = krc::test::run_krc({"decompose", (dir / "bad.json").string()});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("bad.json") != std::string::npos);
  auto missing = krc::test::run_krc({"decompose", (dir / "missing.json").string()});
  CHECK(missing.status == 2);
  auto limit = krc::test::run_krc({"decompose", reference_file("full_transformations_5"),
                                   "--max-images", "5", "-o", (dir / "out.txt").string()});
  CHECK(limit.status == 2);
  // Every limit names the option that lifts it and its current value.
  CHECK(limit.err.find("--max-images (now 5)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "out.txt"));
  auto memory = krc::test::run_krc(
      {"decompose", reference_file("full_transformations_5"), "--max-image-memory", "1"});
  CHECK(memory.status == 0);  // 31 images fit in 1 MiB
  {
    // T_17's generators: 2^17 - 1 images of about 32 bytes, 4 MiB.
    nlohmann::json t17{{"states", nlohmann::json::array()},
                       {"alphabet", {"c", "t", "e"}},
                       {"initial", 0},
                       {"transitions",
                        {{"c", nlohmann::json::array()},
                         {"t", nlohmann::json::array()},
                         {"e", nlohmann::json::array()}}}};
    for (int q = 0; q < 17; ++q) {
      t17["states"].push_back("q" + std::to_string(q));
      t17["transitions"]["c"].push_back((q + 1) % 17);
      t17["transitions"]["t"].push_back(q == 0 ? 1 : q == 1 ? 0 : q);
      t17["transitions"]["e"].push_back(q == 1 ? 0 : q);
    }
    std::ofstream(dir / "t17.json") << t17.dump();
    auto wide = krc::test::run_krc(
        {"decompose", (dir / "t17.json").string(), "--no-tables", "--max-image-memory", "1"});
    CHECK(wide.status == 2);
    CHECK(wide.err.find("--max-image-memory (now 1 MiB)") != std::string::npos);
  }
  auto drawn = krc::test::run_krc({"decompose", reference_file("full_transformations_5"),
                                   "--format", "dot", "--max-drawn-sets", "10"});
  CHECK(drawn.status == 2);
  CHECK(drawn.err.find("--max-drawn-sets (now 10)") != std::string::npos);
  // The table limits name the options that lift them; --no-tables goes around them.
  for (const char* option : {"--max-tuples", "--max-table-cells"}) {
    CAPTURE(option);
    auto tables = krc::test::run_krc({"decompose", reference_file("full_transformations_5"), option,
                                      "20", "-o", (dir / "out.txt").string()});
    CHECK(tables.status == 2);
    CHECK(tables.err.find(std::string(option) + " (now 20)") != std::string::npos);
    CHECK(tables.err.find("--no-tables") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "out.txt"));
    auto skipped =
        krc::test::run_krc({"decompose", reference_file("full_transformations_5"), option, "20",
                            "--no-tables", "-o", (dir / "out.txt").string()});
    CHECK(skipped.status == 0);
    CHECK(krc::test::read_text(dir / "out.txt").find("1: (5,S5)") != std::string::npos);
    std::filesystem::remove(dir / "out.txt");
  }
  auto format = krc::test::run_krc({"decompose", reference_file("abab"), "--format", "xml"});
  CHECK(format.status == 2);
}
