// `krc compile --strategy onelayer` and `krc bench compile --strategy all` through the krc
// command, checked against the library's plan (krc::plan_onelayer) and the written file.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "krc/backend/compile.hpp"
#include "krc/runtime/weights_file.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;
using test::contains;
namespace fs = std::filesystem;

namespace {

std::string reference_file(const std::string& name) {
  return (test::reference_dir() / "automata" / (name + ".json")).string();
}

}  // namespace

TEST_CASE("krc compile --strategy onelayer prints its plan and writes it into the file") {
  test::TempDir dir;
  const std::string out = (dir / "ff2.safetensors").string();
  const auto r = test::run_krc({"compile", reference_file("flipflop_2"), "--strategy", "onelayer",
                                "--max-len", "9", "-o", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const OneLayerPlan plan = plan_onelayer(test::reference_automaton("flipflop_2"), 9, {});
  CHECK(contains(r.out, "strategy: onelayer"));
  CHECK(contains(r.out, "contextual mapping: one rank-1 head"));
  CHECK(contains(r.out,
                 "values: " + test::with_commas(plan.values) + " for the prefixes of up to 9"));
  CHECK(contains(r.out, std::to_string(plan.transformations) + " needed"));
  CHECK(contains(r.out, "largest max-len " + std::to_string(plan.largest_len)));
  const Network net = load_network(out);
  CHECK(net.compiler.at("strategy") == "onelayer");
  CHECK(net.compiler.at("onelayer").at("largest_len") == plan.largest_len);
  CHECK(net.compiler.at("onelayer").at("units") == plan.units());

  const auto j = test::run_krc({"compile", reference_file("flipflop_2"), "--strategy", "onelayer",
                                "--max-len", "9", "-o", out, "--json"});
  REQUIRE(j.status == 0);
  const json summary = json::parse(j.out);
  CHECK(summary.at("onelayer").at("values") == plan.values);
  CHECK(summary.at("onelayer").at("code") == to_string(plan.code));
  CHECK(summary.at("network").at("layers") == plan.layers());
}

TEST_CASE("krc compile --strategy onelayer past the largest max-len: exit 2, the largest named") {
  test::TempDir dir;
  const std::string out = (dir / "d3.safetensors").string();
  const auto r = test::run_krc({"compile", reference_file("dihedral_3"), "--strategy", "onelayer",
                                "--max-len", "10", "-o", out});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "the largest max-len for it is 9"));
  CHECK(contains(r.err, "--max-onelayer-units 2,048"));
  CHECK_FALSE(fs::exists(out));
  // The option the message names lifts the limit.
  const auto lifted =
      test::run_krc({"compile", reference_file("dihedral_3"), "--strategy", "onelayer", "--max-len",
                     "10", "--max-onelayer-units", "8192", "-o", out});
  CHECK(lifted.status == 0);
  CHECK(fs::exists(out));
}

TEST_CASE("krc bench compile --strategy all puts the three strategies side by side") {
  test::TempDir dir;
  for (const char* name : {"abab", "cyclic_3"})
    fs::copy_file(reference_file(name), dir / (std::string(name) + ".json"));
  const auto r = test::run_krc({"bench", "compile", "--automata", dir.path().string(), "--max-len",
                                "8", "--strategy", "all", "-q"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto side = r.out.find("side by side");
  REQUIRE(side != std::string::npos);
  const std::string table = r.out.substr(side);
  CHECK(contains(table, "scan layers/params"));
  CHECK(contains(table, "kr layers/params"));
  CHECK(contains(table, "onelayer layers/params"));
  for (const char* name : {"abab", "cyclic_3"}) {
    CAPTURE(name);
    CompileOptions options;
    options.max_len = 8;
    options.strategy = Strategy::OneLayer;
    const auto size = compile(test::reference_automaton(name), options).network.size();
    const int largest = plan_onelayer(test::reference_automaton(name), 1, {}).largest_len;
    const auto line_start = table.find("\n" + std::string(name) + " ");
    REQUIRE(line_start != std::string::npos);
    const std::string line =
        table.substr(line_start + 1, table.find('\n', line_start + 1) - line_start - 1);
    CAPTURE(line);
    CHECK(contains(line, std::to_string(size.layers) + " / " + test::with_commas(size.parameters)));
    CHECK(line.substr(line.find_last_not_of(' ') + 1 - test::with_commas(largest).size()) ==
          test::with_commas(largest));
  }
  const auto j = test::run_krc({"bench", "compile", "--automata", dir.path().string(), "--max-len",
                                "8", "--strategy", "all", "--json", "-q"});
  REQUIRE(j.status == 0);
  const json rows = json::parse(j.out);
  CHECK(rows.size() == 6);
  for (const auto& row : rows)
    if (row.at("strategy") == "onelayer") CHECK(row.at("largest_len").get<int>() > 0);
}
