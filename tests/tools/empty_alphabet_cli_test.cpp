// Automata with no letters (issue 23's last refusal): JFLAP's test_fa, every transition of
// which is an epsilon one, and a hand-written JSON automaton with "alphabet": []. Each reads
// only the empty word, so krc compiles it to a network of no layers, verifies that word alone
// (random words of length > 0 do not exist), and refuses any letter by name. The expected
// answers come from the files: the epsilon closure of test_fa's initial state is computed here
// from its <transition> elements, read by regex, not by krc's reader.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "test_support.hpp"

using krc::test::contains;
using krc::test::run_krc;

namespace {

std::filesystem::path test_fa() {
  return krc::test::reference_dir() / "realworld" / "files" / "jflapcheck__test_fa.jff";
}

// What the file says, by regex: the epsilon closure of the initial state (state names in the
// file's id order, as the subset construction names a subset) and whether it holds a final
// state. Every transition must read nothing, or the file is not the one this test is about.
struct Closure {
  std::string name;  // "{q0,q1,...}"
  bool accepting = false;
};
Closure closure_of_initial(const std::string& text) {
  std::smatch m;
  std::map<int, std::string> names;
  std::set<int> finals;
  int initial = -1;
  const std::regex state(R"re(<state id="(\d+)" name="([^"]*)">([\s\S]*?)</state>)re");
  for (auto it = text.cbegin(); std::regex_search(it, text.cend(), m, state); it = m[0].second) {
    const int id = std::stoi(m[1]);
    names[id] = m[2];
    if (m[3].str().find("<initial/>") != std::string::npos) initial = id;
    if (m[3].str().find("<final/>") != std::string::npos) finals.insert(id);
  }
  std::multimap<int, int> edges;
  const std::regex transition(
      R"re(<transition>\s*<from>(\d+)</from>\s*<to>(\d+)</to>\s*<read/>\s*</transition>)re");
  for (auto it = text.cbegin(); std::regex_search(it, text.cend(), m, transition); it = m[0].second)
    edges.emplace(std::stoi(m[1]), std::stoi(m[2]));
  REQUIRE(initial >= 0);
  REQUIRE(edges.size() == 18);  // all 18 <transition> elements read nothing
  std::set<int> reached{initial};
  for (std::vector<int> work{initial}; !work.empty();) {
    const int q = work.back();
    work.pop_back();
    for (auto [it, end] = edges.equal_range(q); it != end; ++it)
      if (reached.insert(it->second).second) work.push_back(it->second);
  }
  Closure c;
  for (int q : reached) {
    c.name += (c.name.empty() ? "{" : ",") + names.at(q);
    c.accepting = c.accepting || finals.count(q) > 0;
  }
  c.name += "}";
  return c;
}

// `krc run MODEL "" --json`: the answer at position 0, the only position.
std::vector<std::string> run_empty_word(const std::string& model) {
  const auto run = run_krc({"run", model, "", "--json"});
  REQUIRE(run.status == 0);
  return nlohmann::json::parse(run.out)["states"].get<std::vector<std::string>>();
}

}  // namespace

TEST_CASE("empty alphabet: test_fa compiles and verifies by default, and answers the empty word") {
  const Closure closure = closure_of_initial(krc::test::read_text(test_fa()));
  krc::test::TempDir dir;
  const std::string model = (dir / "test_fa.safetensors").string();
  const auto compile = run_krc({"compile", test_fa().string(), "-o", model, "--json"});
  REQUIRE(compile.status == 0);
  CHECK(contains(compile.err, "the alphabet is empty: the network reads only the empty word"));
  CHECK(contains(compile.err, "krc: output accepting"));  // the file has a final state
  const auto summary = nlohmann::json::parse(compile.out);
  CHECK(summary["automaton"]["letters"] == 0);
  CHECK(summary["network"]["layers"] == 0);

  const auto verify = run_krc({"verify", model, "--json"});
  CHECK(verify.status == 0);
  const auto report = nlohmann::json::parse(verify.out);
  CHECK(report["ok"] == true);
  CHECK(report["words"] == 1);
  CHECK(report["positions"] == 1);
  CHECK(report["wrong_positions"] == 0);
  CHECK(report["random"]["words"] == 0);
  const auto text = run_krc({"verify", model});
  CHECK(text.status == 0);
  CHECK(contains(text.out, "all right"));
  CHECK(contains(text.out, "random: none (no word of length > 0 exists"));

  CHECK(run_empty_word(model) == std::vector<std::string>{closure.accepting ? "accept" : "reject"});
  const auto info = run_krc({"info", model});
  CHECK(info.status == 0);
  CHECK(contains(info.out, "(1 states, 0 letters)"));
  CHECK(contains(info.out, "layers: none (the alphabet is empty"));

  // A letter is refused by name: there is none to read.
  const auto letter = run_krc({"run", model, "a"});
  CHECK(letter.status == 2);
  CHECK(contains(letter.err, "letter \"a\""));
  CHECK(contains(letter.err, "the alphabet is empty"));

  // --output-kind state: the network names the subset state, the closure itself.
  const std::string states = (dir / "states.safetensors").string();
  REQUIRE(run_krc({"compile", test_fa().string(), "-o", states, "--output-kind", "state"}).status ==
          0);
  CHECK(run_krc({"verify", states}).status == 0);
  CHECK(run_empty_word(states) == std::vector<std::string>{closure.name});
  // The reference forward pass (numpy, README's format) reads the network of no layers too.
  const auto reference = krc::test::run_reference_forward(dir, states, {""});
  REQUIRE(reference.size() == 1);
  CHECK(reference[0]["states"] == nlohmann::json::array({closure.name}));
}

TEST_CASE("empty alphabet: every strategy builds the same network of no layers") {
  krc::test::TempDir dir;
  // Two states, the second initial: the network must name "b" at position 0, not state 0.
  const std::string file = krc::test::write_file(
      dir, "two.json",
      R"({"states": ["a", "b"], "alphabet": [], "initial": "b", "transitions": {}})");
  for (const std::string strategy : {"auto", "scan", "kr", "onelayer"}) {
    CAPTURE(strategy);
    const std::string model = (dir / (strategy + ".safetensors")).string();
    const auto compile =
        run_krc({"compile", file, "-o", model, "--strategy", strategy, "--max-len", "8"});
    REQUIRE(compile.status == 0);
    CHECK(contains(compile.out, "0 layers"));
    CHECK(run_krc({"verify", model}).status == 0);
    CHECK(run_empty_word(model) == std::vector<std::string>{"b"});
  }
  // Random words and longer exhaustive words do not exist: asked for, they are refused.
  const std::string model = (dir / "scan.safetensors").string();
  for (const auto& option :
       {std::vector<std::string>{"--random", "5"}, std::vector<std::string>{"--exhaustive", "1"}}) {
    std::vector<std::string> args{"verify", model};
    args.insert(args.end(), option.begin(), option.end());
    const auto verify = run_krc(args);
    CHECK(verify.status == 2);
    CHECK(contains(verify.err, "the alphabet is empty"));
  }
  // Decomposing it works too: the semigroup of no letters is empty.
  const auto decompose = run_krc({"decompose", test_fa().string()});
  CHECK(decompose.status == 0);
  CHECK(contains(decompose.out, "semigroup size: 0"));
  CHECK(contains(decompose.out, "levels: 0"));
}
