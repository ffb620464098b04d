// The krc command's side of the zoo and of reading description files.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/frontend/load_automaton.hpp"
#include "test_support.hpp"

using namespace krc;
using test::contains;
namespace fs = std::filesystem;

namespace {

Automaton reference_automaton(const std::string& stem) {
  auto path = test::reference_dir() / "automata" / (stem + ".json");
  return automaton_from_json(nlohmann::json::parse(test::read_text(path)), path.string());
}

// A state named "accept" or "accept#k" accepts (the network's states are named by output).
bool accepts(const std::string& state) { return state.substr(0, state.rfind('#')) == "accept"; }
}  // namespace

TEST_CASE("krc zoo gridworld --n 9 -o F writes the reference automaton") {
  test::TempDir dir;
  auto out = (dir / "grid.json").string();
  auto r = test::run_krc({"zoo", "gridworld", "--n", "9", "-o", out});
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());
  CHECK(load_automaton(out) == reference_automaton("gridworld_9"));
  // The same text as the reference file, which lacks only the final newline.
  CHECK(test::read_text(out) ==
        test::read_text(test::reference_dir() / "automata" / "gridworld_9.json") + "\n");
}

TEST_CASE("krc zoo prints every reference automaton by its file name") {
  for (const auto& stem : test::reference_automaton_names()) {
    CAPTURE(stem);
    auto r = test::run_krc({"zoo", stem});
    REQUIRE(r.status == 0);
    CHECK(automaton_from_json(nlohmann::json::parse(r.out), stem) == reference_automaton(stem));
  }
}

TEST_CASE("krc zoo lists the families, as text and as JSON") {
  auto text = test::run_krc({"zoo"});
  REQUIRE(text.status == 0);
  auto json = test::run_krc({"zoo", "--json"});
  REQUIRE(json.status == 0);
  auto list = nlohmann::json::parse(json.out);
  REQUIRE(list.size() == zoo_families().size());
  for (const auto& f : zoo_families()) {
    CAPTURE(f.name);
    CHECK(contains(text.out, f.name));
    CHECK(contains(text.out, f.description));
    auto entry =
        std::find_if(list.begin(), list.end(), [&](const auto& e) { return e["name"] == f.name; });
    REQUIRE(entry != list.end());
    CHECK((*entry)["has_parameter"] == f.has_parameter);
    if (f.has_parameter) {
      CHECK((*entry)["default_n"] == f.default_n);
      CHECK((*entry)["min_n"] == f.min_n);
      CHECK((*entry)["max_n"] == f.max_n);
    }
  }
}

TEST_CASE("krc zoo with a bad family or n exits 2 and writes no file") {
  test::TempDir dir;
  auto out = (dir / "s.json").string();
  auto r = test::run_krc({"zoo", "symmetric", "--n", "9", "-o", out});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "symmetric"));
  CHECK(contains(r.err, "9"));
  CHECK_FALSE(fs::exists(out));
  auto unknown = test::run_krc({"zoo", "pairty"});
  CHECK(unknown.status == 2);
  CHECK(contains(unknown.err, "parity"));  // lists what there is
  CHECK(unknown.out.empty());
}

TEST_CASE("bad input exits 2, names the file and the place, and writes no output") {
  test::TempDir dir;
  auto input = (dir / "nondeterministic.dot").string();
  std::ofstream(input) << "digraph g {\n  s0 -> s0 [label=\"a\"];\n  s0 -> s1 [label=\"a\"];\n"
                          "  s1 -> s1 [label=\"a\"];\n  __start0 -> s0;\n}\n";
  auto out = (dir / "out.json").string();
  // An NFA is determinised unless --no-determinise asks that it be refused.
  auto r = test::run_krc({"decompose", input, "--format", "json", "-o", out, "--no-determinise"});
  CHECK(r.status == 2);
  CHECK(contains(r.err, input));
  CHECK(contains(r.err, "line 3"));
  CHECK(contains(r.err, "'s0'"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("a missing input file exits 2 and names it") {
  test::TempDir dir;
  auto missing = (dir / "absent.json").string();
  auto r = test::run_krc({"decompose", missing});
  CHECK(r.status == 2);
  CHECK(contains(r.err, missing));
}

TEST_CASE("a partial DFA is refused, and completed with --complete") {
  test::TempDir dir;
  auto input = (dir / "partial.jff").string();
  std::ofstream(input) << "<structure><type>fa</type><automaton>\n"
                          "<state id=\"0\" name=\"a\"><initial/></state>\n"
                          "<state id=\"1\" name=\"b\"></state>\n"
                          "<transition><from>0</from><to>1</to><read>x</read></transition>\n"
                          "</automaton></structure>\n";
  auto refused = test::run_krc({"decompose", input});
  CHECK(refused.status == 2);
  CHECK(contains(refused.err, input));
  CHECK(contains(refused.err, "line 3"));
  CHECK(contains(refused.err, "state 'b'"));
  CHECK(contains(refused.err, "letter 'x'"));
  auto completed = test::run_krc({"decompose", input, "--complete", "--format", "json"});
  CHECK(completed.status == 0);
  CHECK(nlohmann::json::parse(completed.out)["automaton"]["states"] == 3);
}

TEST_CASE("a partial acceptor is completed by default, with a note; a semiautomaton asks") {
  test::TempDir dir;
  // s1 accepts and has no transition on b; s0 has every letter.
  const std::string acceptor = test::write_file(
      dir, "acceptor.dot",
      "digraph g {\n  __start0 -> s0;\n  s0 [shape=circle];\n  s1 [shape=doublecircle];\n"
      "  s0 -> s1 [label=\"a\"];\n  s0 -> s0 [label=\"b\"];\n  s1 -> s0 [label=\"a\"];\n}\n");
  const std::string model = (dir / "acceptor.safetensors").string();
  auto compile = test::run_krc({"compile", acceptor, "-o", model, "--max-len", "8"});
  CAPTURE(compile.err);
  REQUIRE(compile.status == 0);
  CHECK(contains(compile.err, "krc: note: " + acceptor +
                                  ": a partial acceptor: its 1 missing "
                                  "transition goes to a rejecting sink state 'sink'"));
  CHECK(contains(compile.err, "krc: output accepting"));
  // a b: s1, then the sink: rejected from there on (a b a as well).
  auto run = test::run_krc({"run", model, "--json", "a", "b", "a"});
  REQUIRE(run.status == 0);
  const auto states = nlohmann::json::parse(run.out)["states"];
  REQUIRE(states.size() == 4);
  CHECK_FALSE(accepts(states[0].get<std::string>()));
  CHECK(accepts(states[1].get<std::string>()));
  CHECK_FALSE(accepts(states[2].get<std::string>()));
  CHECK_FALSE(accepts(states[3].get<std::string>()));
  // The same graph without an accepting state is a semiautomaton: it still asks.
  const std::string bare = test::write_file(
      dir, "bare.dot",
      "digraph g {\n  __start0 -> s0;\n  s0 -> s1 [label=\"a\"];\n  s0 -> s0 [label=\"b\"];\n"
      "  s1 -> s0 [label=\"a\"];\n}\n");
  auto refused = test::run_krc({"info", bare});
  CHECK(refused.status == 2);
  CHECK(contains(refused.err, "use --complete"));
}

TEST_CASE("a partial Mealy machine is completed by default with the undefined output") {
  // AutomataLib's serialization example: 0 -a/1-> 1 -b/2-> 2 -c/3-> 0 and nothing else, so 6
  // of its 9 transitions are missing (tests/reference/realworld/SOURCES.md).
  test::TempDir dir;
  const std::string input =
      (test::reference_dir() / "realworld" / "files" / "automatalib__serialization_mealy.dot")
          .string();
  const std::string model = (dir / "m.safetensors").string();
  auto compile = test::run_krc({"compile", input, "-o", model, "--max-len", "8"});
  CAPTURE(compile.err);
  REQUIRE(compile.status == 0);
  CHECK(contains(compile.err, "krc: note: " + input +
                                  ": a partial Mealy machine: its 6 missing transitions go to a "
                                  "sink state 'sink' (a missing transition outputs "
                                  "'(undefined)'"));
  auto run = test::run_krc({"run", model, "--json", "a", "b", "c", "a", "c", "a"});
  REQUIRE(run.status == 0);
  std::vector<std::string> outputs;
  // The parsed report is kept: a range-for over parse(...)["states"] would iterate a member of
  // a temporary destroyed before the loop runs (C++20 extends only the outermost temporary).
  const nlohmann::json report = nlohmann::json::parse(run.out);
  for (const auto& s : report["states"]) {
    const std::string name = s.get<std::string>();
    outputs.push_back(name.substr(0, name.rfind('#')));
  }
  // By hand from the file: the outputs while it has transitions, then "(undefined)" on.
  CHECK(outputs == std::vector<std::string>{"-", "1", "2", "3", "1", "(undefined)", "(undefined)"});
  // --complete builds the same network, silently.
  const std::string asked = (dir / "asked.safetensors").string();
  auto complete = test::run_krc({"compile", input, "--complete", "-o", asked, "--max-len", "8"});
  REQUIRE(complete.status == 0);
  CHECK_FALSE(contains(complete.err, "krc: note:"));
  CHECK(test::read_text(model) == test::read_text(asked));
}
