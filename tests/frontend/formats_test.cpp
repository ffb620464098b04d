#include <doctest/doctest.h>

#include <iostream>
#include <sstream>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;

TEST_CASE("formats: one automaton written in JSON, DOT and JFLAP loads identically") {
  Automaton from_json = load_automaton(test::frontend_data("mod3.json").string());
  Automaton from_dot = load_automaton(test::frontend_data("mod3.dot").string());
  Automaton from_jflap = load_automaton(test::frontend_data("mod3.jff").string());
  CHECK(from_json == from_dot);
  CHECK(from_json == from_jflap);
  // And it is the automaton the files describe: a's counted mod 3, accepting at 0.
  CHECK(from_json.states() == std::vector<std::string>{"r0", "r1", "r2"});
  std::vector<LetterId> word{0, 1, 0, 0, 1, 0};  // a b a a b a: four a's
  CHECK(from_dot.run(word).back() == 1);
}

TEST_CASE("formats: the content decides when the extension does not") {
  test::TempDir dir;
  for (const char* sample : {"mod3.json", "mod3.dot", "mod3.jff"}) {
    CAPTURE(sample);
    std::string text = test::read_text(test::frontend_data(sample));
    std::string path = test::write_file(dir, "mod3.txt", text);
    CHECK(load_automaton(path) == load_automaton(test::frontend_data("mod3.json").string()));
  }
  CHECK(detect_format("x.gv", "") == "dot");
  CHECK(detect_format("x.JSON", "") == "json");
  CHECK(detect_format("x", "  strict digraph { }") == "dot");
  CHECK(detect_format("x", "hello") == "");
}

TEST_CASE("formats: an explicit format wins over the extension") {
  test::TempDir dir;
  std::string path =
      test::write_file(dir, "mod3.json", test::read_text(test::frontend_data("mod3.dot")));
  LoadOptions options;
  options.format = "dot";
  CHECK(load_automaton(path, options) == load_automaton(test::frontend_data("mod3.dot").string()));
  options.format = "yaml";
  auto e = test::load_error("mod3.dot", "digraph {}", "", options);
  CHECK(contains(e.problem(), "unknown format 'yaml'"));
}

TEST_CASE("formats: content of no known format") {
  auto e = test::load_error("notes.txt", "these are not an automaton\n", "line 1");
  CHECK(contains(e.problem(), "cannot tell the format"));
}

TEST_CASE("formats: parse_automaton names the automaton after the file") {
  std::string text = test::read_text(test::frontend_data("mod3.dot"));
  CHECK(parse_automaton(text, "dir/thing.dot").name() == "thing");
  CHECK(parse_automaton(text, "<stdin>", {{}, "dot"}).name() == "stdin");
}

TEST_CASE("formats: - reads standard input, sniffing the format") {
  std::istringstream in(test::read_text(test::frontend_data("mod3.jff")));
  auto* saved = std::cin.rdbuf(in.rdbuf());
  Automaton a = load_automaton("-");
  std::cin.rdbuf(saved);
  CHECK(a.name() == "stdin");
  CHECK(a.transitions() == load_automaton(test::frontend_data("mod3.jff").string()).transitions());
}

TEST_CASE("formats: a byte order mark is skipped in every format") {
  test::TempDir dir;
  for (const char* sample : {"mod3.json", "mod3.dot", "mod3.jff"}) {
    CAPTURE(sample);
    std::string path = test::write_file(
        dir, sample, "\xEF\xBB\xBF" + test::read_text(test::frontend_data(sample)));
    CHECK(load_automaton(path) == load_automaton(test::frontend_data("mod3.json").string()));
  }
}
