// Hostile inputs for the DOT and JFLAP readers, generated here: nesting that would overflow
// the stack inside Boost's parsers is refused before they run (exit 2, the line, the limit),
// and a syntax error deep in a large file is located in one pass. ctest's TIMEOUT on this
// module is the speed check (tests/CMakeLists.txt); nothing here times itself.
#include <doctest/doctest.h>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;
using test::load_error;

namespace {

// `digraph g {` on line 1, then `open` on each of lines 2..depth, one state and its loop,
// the closing braces, and the start marker.
std::string nested_dot(int depth, const std::string& open) {
  std::string text = "digraph g {\n";
  for (int i = 1; i < depth; ++i) text += open + "\n";
  text += "s0 -> s0 [label=\"a\"];\n";
  for (int i = 1; i < depth; ++i) text += "}\n";
  return text + "__start0 -> s0;\n}\n";
}

// <structure> on line 1, then `depth - 1` nested <x> elements, one per line.
std::string nested_xml(int depth) {
  std::string text = "<structure>\n";
  for (int i = 1; i < depth; ++i) text += "<x>\n";
  for (int i = 1; i < depth; ++i) text += "</x>\n";
  return text + "<type>fa</type></structure>\n";
}

}  // namespace

TEST_CASE("dot: 20,000 nested braces or subgraphs stop at the nesting limit, at its line") {
  for (const std::string open : {"{", "subgraph {", "subgraph s {"}) {
    CAPTURE(open);
    // Line k opens depth k: the 101st level is on line 101.
    auto e = load_error("deep.dot", nested_dot(20'000, open), "line 101");
    CHECK(contains(e.problem(), "nested more than 100 deep"));
  }
}

TEST_CASE("dot: nesting up to the limit reads") {
  for (const std::string open : {"{", "subgraph {"}) {
    CAPTURE(open);
    test::TempDir dir;
    Automaton a = load_automaton(test::write_file(dir, "deep.dot", nested_dot(100, open)));
    CHECK(a.states() == std::vector<std::string>{"s0"});
    CHECK(a.letters() == std::vector<std::string>{"a"});
  }
}

TEST_CASE("jflap: 20,000 nested elements stop at the nesting limit, at its line") {
  auto e = load_error("deep.jff", nested_xml(20'000), "line 101");
  CHECK(contains(e.problem(), "nested more than 100 deep"));
  // Up to the limit the XML parser runs and the file is judged on its content.
  auto shallow = load_error("shallow.jff", nested_xml(100));
  CHECK(contains(shallow.problem(), "no states"));
}

TEST_CASE("dot: a syntax error on line 200,000 is located in one pass") {
  std::string text = "digraph g {\n__start0 -> s0;\n";
  for (int line = 3; line < 200'000; ++line) text += "s0 -> s0 [label=\"a\"];\n";
  text += "s0 -> -> s0 [label=\"a\"];\n}\n";  // line 200,000
  auto e = load_error("long.dot", text, "line 200000");
  CHECK(contains(e.problem(), "not valid Graphviz DOT"));
}

TEST_CASE("krc: hostile nesting exits 2 with the file, the line and the limit") {
  test::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> files{
      {"braces.dot", nested_dot(20'000, "{")},
      {"subgraphs.dot", nested_dot(20'000, "subgraph {")},
      {"elements.jff", nested_xml(20'000)}};
  for (const auto& [name, text] : files) {
    CAPTURE(name);
    const std::string path = test::write_file(dir, name, text);
    for (const char* command : {"info", "decompose", "compile"}) {
      CAPTURE(command);
      std::vector<std::string> args{command, path};
      if (std::string(command) == "compile") args.insert(args.end(), {"-o", (dir / "x").string()});
      auto result = test::run_krc(args);
      CHECK(result.status == 2);
      CHECK(contains(result.err, path + ": line 101: "));
      CHECK(contains(result.err, "nested more than 100 deep"));
      CHECK(result.out.empty());
    }
  }
  CHECK_FALSE(std::filesystem::exists(dir / "x"));
}
