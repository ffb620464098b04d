// `krc bench compile` through the krc command, checked along an independent path: the same
// automata compiled here through the library (krc::compile, krc::network_to_safetensors,
// krc::verify) must give the sizes, file bytes and verification figures the command reports.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/verifier.hpp"
#include "krc/runtime/weights_file.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;
using test::contains;
using test::with_commas;
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Two small reference automata, copied into `dir`: a group (Z3) and one with resets (abab).
const std::vector<std::string> small_automata{"abab", "cyclic_3"};

void copy_small_automata(const fs::path& dir) {
  for (const auto& name : small_automata)
    fs::copy_file(test::reference_dir() / "automata" / (name + ".json"), dir / (name + ".json"));
}

Automaton load_reference(const std::string& name) {
  const fs::path path = test::reference_dir() / "automata" / (name + ".json");
  return automaton_from_json(json::parse(test::read_text(path)), path.string());
}

CompileResult compile_with(const Automaton& automaton, Strategy strategy, int max_len) {
  CompileOptions options;
  options.strategy = strategy;
  options.max_len = max_len;
  return compile(automaton, options);
}

json run_json(const std::vector<std::string>& args) {
  const auto r = test::run_krc(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json rows = json::parse(r.out);
  REQUIRE(rows.is_array());
  return rows;
}

}  // namespace

TEST_CASE(
    "bench compile --json: one row per automaton, max_len and strategy, sized as the library "
    "compiles them") {
  test::TempDir dir;
  copy_small_automata(dir.path());
  const int max_len = 16;
  const json rows = run_json({"bench", "compile", "--automata", dir.path().string(), "--max-len",
                              std::to_string(max_len), "--json", "-q"});
  REQUIRE(rows.size() == small_automata.size() * 2);

  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& row : rows) {
    const std::string name = row.at("automaton"), strategy = row.at("strategy");
    CAPTURE(name);
    CAPTURE(strategy);
    seen.insert({name, strategy});
    CHECK(row.at("max_len") == max_len);
    REQUIRE_FALSE(row.contains("error"));
    const Automaton automaton = load_reference(name);
    CHECK(row.at("states") == automaton.state_count());
    CHECK(row.at("letters") == automaton.letter_count());

    const CompileResult expected = compile_with(automaton, strategy_from_string(strategy), max_len);
    const NetworkSize size = expected.network.size();
    CHECK(row.at("layers") == size.layers);
    CHECK(row.at("parameters") == size.parameters);
    CHECK(row.at("nonzeros") == size.nonzeros);
    CHECK(row.at("d_model") == size.d_model);
    CHECK(row.at("heads") == size.heads);
    long long hidden = 0;
    for (int h : size.mlp_hidden) hidden += h;
    CHECK(row.at("mlp_hidden") == hidden);
    CHECK(row.at("bytes") == network_to_safetensors(expected.network).size());
    CHECK(row.at("compile_seconds").get<double>() >= 0);
    CHECK_FALSE(row.contains("verify"));  // off by default
  }
  std::set<std::pair<std::string, std::string>> expected_pairs;
  for (const auto& name : small_automata)
    for (const char* s : {"scan", "kr"}) expected_pairs.insert({name, s});
  CHECK(seen == expected_pairs);
}

TEST_CASE("bench compile: the text table has a row per network with thousands separators") {
  test::TempDir dir;
  copy_small_automata(dir.path());
  const int max_len = 40;
  const auto r = test::run_krc({"bench", "compile", "--automata", dir.path().string(), "--max-len",
                                std::to_string(max_len), "--strategy", "kr"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "parameters"));
  std::istringstream lines(r.out);
  std::string line;
  std::map<std::string, std::string> row_of;
  while (std::getline(lines, line))
    for (const auto& name : small_automata)
      if (line.rfind(name + " ", 0) == 0) row_of[name] += line;
  for (const auto& name : small_automata) {
    CAPTURE(name);
    REQUIRE(row_of.count(name) == 1);
    const NetworkSize size =
        compile_with(load_reference(name), Strategy::Kr, max_len).network.size();
    CHECK(contains(row_of[name], " kr "));
    CHECK(contains(row_of[name], " " + with_commas(size.parameters) + " "));
    CHECK(contains(row_of[name], " " + with_commas(size.nonzeros) + " "));
    CHECK_FALSE(contains(row_of[name], "scan"));
  }
}

TEST_CASE(
    "bench compile --verify-words: K random words of length max_len, figures as krc::verify gives "
    "them") {
  test::TempDir dir;
  copy_small_automata(dir.path());
  const int max_len = 20, words = 3;
  const json rows = run_json({"bench", "compile", "--automata", dir.path().string(), "--max-len",
                              std::to_string(max_len), "--strategy", "scan", "--verify-words",
                              std::to_string(words), "--json"});
  REQUIRE(rows.size() == small_automata.size());
  for (const auto& row : rows) {
    const std::string name = row.at("automaton");
    CAPTURE(name);
    REQUIRE(row.contains("verify"));
    const json& v = row.at("verify");
    CHECK(v.at("words") == words);  // no exhaustive part
    CHECK(v.at("length") == max_len);
    CHECK(v.at("positions") == words * (max_len + 1));
    CHECK(v.at("wrong_positions") == 0);
    CHECK(v.at("ok") == true);
    CHECK(v.at("words_per_second").get<double>() > 0);
    CHECK(v.at("cpu_seconds").get<double>() >= 0);

    const Automaton automaton = load_reference(name);
    VerifyOptions options;
    options.exhaustive_length = 0;
    options.random_words = words;
    options.random_length = max_len;
    const VerifyReport report =
        verify(compile_with(automaton, Strategy::Scan, max_len).network, automaton, options);
    REQUIRE(report.ok());
    CHECK(v.at("smallest_margin").get<double>() == doctest::Approx(report.smallest_margin));
  }
}

TEST_CASE(
    "bench compile: a strategy over its limits gives the reason in its row, the others still run") {
  test::TempDir dir;
  copy_small_automata(dir.path());
  // 2,100 states: past the integer form's float32 bound (2,047 states), a parallel-prefix step
  // over state maps needs 2100^3 + 2*2100^2 hidden units.
  const Automaton big = zoo_automaton("gridworld", 2100);
  write_text(dir / "big.json", automaton_to_json_text(big));
  std::string library_error;
  try {
    compile_with(big, Strategy::Scan, 16);
  } catch (const LimitError& e) {
    library_error = e.what();
  }
  REQUIRE_FALSE(library_error.empty());

  const json rows = run_json({"bench", "compile", "--automata", dir.path().string(), "--max-len",
                              "16", "--strategy", "scan", "--json"});
  REQUIRE(rows.size() == small_automata.size() + 1);
  int errors = 0;
  for (const auto& row : rows) {
    if (row.at("automaton") == big.name()) {
      ++errors;
      CHECK(row.at("error") == library_error);
      CHECK_FALSE(row.contains("layers"));
    } else {
      CHECK_FALSE(row.contains("error"));
      CHECK(row.at("layers").get<int>() > 0);
    }
  }
  CHECK(errors == 1);

  const auto text = test::run_krc({"bench", "compile", "--automata", dir.path().string(),
                                   "--max-len", "16", "--strategy", "scan"});
  CHECK(text.status == 0);
  CHECK(contains(text.out, "error: " + library_error));
}

TEST_CASE("bench compile: the default directory is the repository's automata/zoo") {
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "automata" / "zoo"))
    if (entry.path().extension() == ".json") files.insert(entry.path().stem().string());
  REQUIRE_FALSE(files.empty());
  const json rows =
      run_json({"bench", "compile", "--max-len", "1", "--strategy", "scan", "--json", "-q"});
  std::set<std::string> names;
  for (const auto& row : rows) names.insert(row.at("automaton").get<std::string>());
  CHECK(rows.size() == files.size());
  CHECK(names == files);  // zoo files are named after their automata
}

TEST_CASE("bench compile: a missing directory or a broken file exits 2 and names it") {
  test::TempDir dir;
  const auto missing = test::run_krc(
      {"bench", "compile", "--automata", (dir / "nowhere").string(), "--max-len", "4"});
  CHECK(missing.status == 2);
  CHECK(contains(missing.err, "nowhere"));

  const auto empty =
      test::run_krc({"bench", "compile", "--automata", dir.path().string(), "--max-len", "4"});
  CHECK(empty.status == 2);
  CHECK(contains(empty.err, "no automaton files"));

  copy_small_automata(dir.path());
  write_text(dir / "broken.json", "{\"name\": \"broken\", \"states\": [");
  const auto broken =
      test::run_krc({"bench", "compile", "--automata", dir.path().string(), "--max-len", "4"});
  CHECK(broken.status == 2);
  CHECK(contains(broken.err, "broken.json"));
  CHECK(broken.out.empty());  // no half table
}

TEST_CASE(
    "bench compile --zoo FAMILY --n: one row per size, with states, the widest layer and the "
    "scan form") {
  const json rows = run_json({"bench", "compile", "--zoo", "gridworld", "--n", "4", "9",
                              "--max-len", "32", "--strategy", "both", "--json", "-q"});
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) {
    const int n = row.at("states");
    const std::string strategy = row.at("strategy");
    CAPTURE(n);
    CAPTURE(strategy);
    const CompileResult expected =
        compile_with(zoo_automaton("gridworld", n), strategy_from_string(strategy), 32);
    const NetworkSize size = expected.network.size();
    CHECK(row.at("automaton") == "gridworld_" + std::to_string(n));
    CHECK(row.at("d_model") == size.d_model);
    CHECK(row.at("mlp_hidden_max") ==
          *std::max_element(size.mlp_hidden.begin(), size.mlp_hidden.end()));
    CHECK(row.at("scan_form") ==
          (expected.scan ? std::string(to_string(expected.scan->form)) : std::string("-")));
  }
  const auto text = test::run_krc({"bench", "compile", "--zoo", "gridworld", "--n", "9",
                                   "--max-len", "32", "--strategy", "scan"});
  REQUIRE(text.status == 0);
  CHECK(contains(text.out, "per layer"));
  CHECK(contains(text.out, "integer coordinates"));
  const auto unknown = test::run_krc({"bench", "compile", "--zoo", "nosuch", "--max-len", "4"});
  CHECK(unknown.status == 2);
  CHECK(contains(unknown.err, "nosuch"));
}
