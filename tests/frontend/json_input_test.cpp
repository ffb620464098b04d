#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "frontend_test_helpers.hpp"
#include "krc/automata/automaton_json.hpp"

using namespace krc;
using test::contains;
using test::load_error;
using test::load_text;

TEST_CASE("json: every reference automaton loads as its document describes") {
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    auto path = (test::reference_dir() / "automata" / (name + ".json")).string();
    auto doc = nlohmann::json::parse(test::read_text(path));
    Automaton a = load_automaton(path);
    CHECK(a.name() == doc["name"]);
    CHECK(a.states() == doc["states"].get<std::vector<std::string>>());
    CHECK(a.letters() == doc["alphabet"].get<std::vector<std::string>>());
    CHECK(a.state_name(a.initial()) == doc["initial"]);
    for (LetterId l = 0; l < a.letter_count(); ++l)
      for (StateId q = 0; q < a.state_count(); ++q)
        CHECK(a.state_name(a.step(q, l)) == doc["transitions"][a.letter_name(l)][q]);
  }
}

TEST_CASE("json: the sample with targets by index and no name") {
  Automaton a = load_automaton(test::frontend_data("mod3.json").string());
  CHECK(a.name() == "mod3");  // from the file name
  CHECK(a.states() == std::vector<std::string>{"r0", "r1", "r2"});
  CHECK(a.letters() == std::vector<std::string>{"a", "b"});
  CHECK(a.transitions() == std::vector<std::vector<StateId>>{{1, 2, 0}, {0, 1, 2}});
  CHECK(a.accepting() == std::vector<StateId>{0});
}

TEST_CASE("json: not JSON is an error at its line and column") {
  // Line 3, column 12: the parser stops at the unquoted word.
  auto e = load_error("broken.json", "{\n \"states\": [\"a\"],\n \"alphabet\": x\n}\n",
                      "line 3, column 14");
  CHECK(contains(e.problem(), "not valid JSON"));
  load_error("words.json", "hello world\n", "line 1, column 1");
}

TEST_CASE("json: truncated JSON is an error at the end") {
  auto e = load_error("truncated.json", "{\"states\": [\"a\",\n", "line 2, column 1");
  CHECK(contains(e.problem(), "not valid JSON"));
}

TEST_CASE("json: a transition to an unknown state") {
  auto e = load_error("unknown.json",
                      R"({"states": ["a", "b"], "alphabet": ["x"], "initial": "a",
                          "transitions": {"x": ["b", "c"]}})",
                      "/transitions/x/1");
  CHECK(contains(e.problem(), "unknown state 'c'"));
}

TEST_CASE("json: a missing transition is an error naming the state and the letter") {
  std::string partial = R"({"states": ["a", "b"], "alphabet": ["x", "y"], "initial": "a",
                            "transitions": {"x": ["b", "a"], "y": ["a"]}})";
  auto e = load_error("partial.json", partial, "/states/1");
  CHECK(contains(e.problem(), "state 'b'"));
  CHECK(contains(e.problem(), "letter 'y'"));
}

TEST_CASE("json: a missing transition is completed with a sink when asked") {
  std::string partial = R"({"states": ["a", "b"], "alphabet": ["x", "y"], "initial": "a",
                            "transitions": {"x": ["b", "a"], "y": ["a", null]}})";
  test::TempDir dir;
  LoadOptions options;
  options.completion.add_sink = true;
  Automaton a = load_automaton(test::write_file(dir, "partial.json", partial), options);
  REQUIRE(a.states() == std::vector<std::string>{"a", "b", "sink"});
  // b --y--> sink, and the sink maps to itself on every letter.
  CHECK(a.transitions() == std::vector<std::vector<StateId>>{{1, 0, 2}, {0, 2, 2}});
}

TEST_CASE("json: duplicate state names") {
  auto e = load_error(
      "dup.json",
      R"({"states": ["a", "a"], "alphabet": ["x"], "initial": "a", "transitions": {"x": [0, 1]}})",
      "/states/1");
  CHECK(contains(e.problem(), "duplicate state name 'a'"));
}

TEST_CASE("json: an empty alphabet reads: the automaton reads only the empty word") {
  const Automaton a =
      load_text("empty_alphabet.json",
                R"({"states": ["a", "b"], "alphabet": [], "initial": "b", "transitions": {},
                    "accepting": ["b"]})");
  CHECK(a.letter_count() == 0);
  CHECK(a.states() == std::vector<std::string>{"a", "b"});
  CHECK(a.state_name(a.initial()) == "b");
  CHECK(a.accepting() == std::vector<StateId>{1});
  // A letter there is none of is still named.
  auto e = load_error("stray.json",
                      R"({"states": ["a"], "alphabet": [], "initial": "a",
                          "transitions": {"x": [0]}})",
                      "/transitions/x");
  CHECK(contains(e.problem(), "letter 'x' is not in the alphabet"));
}

TEST_CASE("json: a member given twice") {
  // JSON would keep the second list silently; that would drop half of the transitions.
  auto e = load_error("twice.json",
                      R"({"states": ["a"], "alphabet": ["x"], "initial": "a",
                          "transitions": {"x": ["a"], "x": ["a"]}})",
                      "/transitions/x");
  CHECK(contains(e.problem(), "twice"));
}

TEST_CASE("json: a missing file") {
  try {
    load_automaton("/nonexistent/dir/automaton.json");
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "/nonexistent/dir/automaton.json");
    CHECK(contains(e.problem(), "cannot open"));
  }
}

TEST_CASE("json: an empty file") {
  auto e = load_error("empty.json", "");
  CHECK(contains(e.problem(), "empty"));
  auto blank = load_error("blank.json", "  \n\n");
  CHECK(contains(blank.problem(), "empty"));
}

TEST_CASE("json: a directory instead of a file") {
  test::TempDir dir;
  CHECK_THROWS_AS(load_automaton(dir.path().string()), InputError);
}
