#include <doctest/doctest.h>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;
using test::load_error;
using test::load_text;

namespace {
using Delta = std::vector<std::vector<StateId>>;
}

TEST_CASE("dot: AALpy's DFA sample") {
  Automaton a = load_automaton(test::frontend_data("aalpy_dfa.dot").string());
  CHECK(a.name() == "aalpy_dfa");
  CHECK(a.states() == std::vector<std::string>{"s0", "s1", "s2", "s3"});
  CHECK(a.letters() == std::vector<std::string>{"a", "b"});
  CHECK(a.initial() == 0);
  CHECK(a.accepting() == std::vector<StateId>{0, 3});  // shape=doublecircle
  // a: s0->s1, s1->s2, s2->s2, s3->s1;  b: s0->s0, s1->s3, s2->s2, s3->s0
  CHECK(a.transitions() == Delta{{1, 2, 2, 1}, {0, 3, 2, 0}});
}

TEST_CASE("dot: AALpy's Mealy sample keeps the inputs") {
  Automaton a = load_automaton(test::frontend_data("aalpy_mealy.dot").string());
  CHECK(a.states() == std::vector<std::string>{"s0", "s1", "s2"});
  CHECK(a.letters() == std::vector<std::string>{"coin", "button"});
  CHECK(a.initial() == 0);
  CHECK(a.accepting().empty());
  // coin: s0->s1, s1->s1, s2->s1;  button: s0->s0, s1->s2, s2->s0
  CHECK(a.transitions() == Delta{{1, 1, 1}, {0, 2, 0}});
}

TEST_CASE("dot: LearnLib's DFA sample is named by its labels") {
  Automaton a = load_automaton(test::frontend_data("learnlib_dfa.dot").string());
  CHECK(a.states() == std::vector<std::string>{"0", "1", "2"});
  CHECK(a.letters() == std::vector<std::string>{"x", "y"});
  CHECK(a.initial() == 0);
  CHECK(a.accepting() == std::vector<StateId>{1});
  // x: 0->1, 1->1, 2->0;  y: 0->2, 1->0, 2->2
  CHECK(a.transitions() == Delta{{1, 1, 0}, {2, 0, 2}});
}

TEST_CASE("dot: LearnLib's Mealy sample with spaced labels and another initial state") {
  Automaton a = load_automaton(test::frontend_data("learnlib_mealy.dot").string());
  CHECK(a.states() == std::vector<std::string>{"0", "1"});
  CHECK(a.letters() == std::vector<std::string>{"req", "tick"});
  CHECK(a.initial() == 1);  // __start0 -> s1
  // req: 0->1, 1->0;  tick: 0->0, 1->1
  CHECK(a.transitions() == Delta{{1, 0}, {0, 1}});
}

TEST_CASE("dot: repeated labels fall back to node ids") {
  std::string text =
      "digraph g {\n  s0 [label=\"same\"];\n  s1 [label=\"same\"];\n  s0 -> s1 [label=\"a\"];\n"
      "  s1 -> s0 [label=\"a\"];\n  __start0 -> s1;\n}\n";
  test::TempDir dir;
  Automaton a = load_automaton(test::write_file(dir, "twins.dot", text));
  CHECK(a.states() == std::vector<std::string>{"s0", "s1"});
  CHECK(a.initial() == 1);
}

TEST_CASE("dot: with --no-determinise an edge repeating a letter of a state is an error") {
  LoadOptions strict;
  strict.completion.determinise = false;
  std::string text =
      "digraph g {\n"                // 1
      "  s0 [label=\"s0\"];\n"       // 2
      "  s1 [label=\"s1\"];\n"       // 3
      "  s0 -> s1 [label=\"a\"];\n"  // 4
      "  s1 -> s1 [label=\"a\"];\n"  // 5
      "  s0 -> s0 [label=\"a\"];\n"  // 6: s0 already reads a
      "  __start0 -> s0;\n"
      "}\n";
  auto e = load_error("nondeterministic.dot", text, "line 6", strict);
  CHECK(contains(e.problem(), "nondeterminism"));
  CHECK(contains(e.problem(), "state 's0'"));
  CHECK(contains(e.problem(), "letter 'a'"));
  CHECK(contains(e.problem(), "line 4"));  // where the first edge is
}

TEST_CASE("dot: malformed DOT names the line") {
  std::string text =
      "digraph g {\n"
      "  s0 [label=\"s0\"];\n"
      "  s0 -> -> s1 [label=\"a\"];\n"
      "  __start0 -> s0;\n"
      "}\n";
  auto e = load_error("malformed.dot", text, "line 3");
  CHECK(contains(e.problem(), "not valid Graphviz DOT"));
}

TEST_CASE("dot: an unterminated string names its line") {
  std::string text =
      "digraph g {\n  s0 [label=\"s0\"];\n  s1 [label=\"s1];\n  __start0 -> s0;\n}\n";
  load_error("unterminated.dot", text, "line 3");
}

TEST_CASE("dot: a missing closing brace is reported at the end") {
  std::string text = "digraph g {\n  s0 -> s0 [label=\"a\"];\n  __start0 -> s0;\n\n";
  load_error("open.dot", text, "line 3");
}

TEST_CASE("dot: an undirected graph") {
  auto e = load_error("undirected.gv", "\n\ngraph g {\n  a -- b;\n}\n", "line 3");
  CHECK(contains(e.problem(), "undirected"));
}

TEST_CASE("dot: no start marker: the first state mentioned is initial") {
  CHECK(load_text("no_start.dot",
                  "digraph g {\n  s1 -> s0 [label=\"a\"];\n  s0 -> s1 [label=\"a\"];\n}\n")
            .initial() == 0);
}

TEST_CASE("dot: an edge without a label") {
  auto e =
      load_error("unlabelled.dot", "digraph g {\n  __start0 -> s0;\n  s0 -> s0;\n}\n", "line 3");
  CHECK(contains(e.problem(), "no label"));
}

TEST_CASE("dot: a partial DFA names the state and letter, and is completed on request") {
  std::string text =
      "digraph g {\n  s0 [label=\"s0\"];\n  s1 [label=\"s1\"];\n  s0 -> s1 [label=\"a\"];\n"
      "  s0 -> s0 [label=\"b\"];\n  s1 -> s0 [label=\"a\"];\n  __start0 -> s0;\n}\n";
  auto e = load_error("partial.dot", text, "line 3");  // where s1 is declared
  CHECK(contains(e.problem(), "state 's1'"));
  CHECK(contains(e.problem(), "letter 'b'"));

  test::TempDir dir;
  LoadOptions options;
  options.completion.add_sink = true;
  Automaton a = load_automaton(test::write_file(dir, "partial.dot", text), options);
  CHECK(a.states() == std::vector<std::string>{"s0", "s1", "sink"});
  CHECK(a.transitions() == Delta{{1, 0, 2}, {0, 2, 2}});
}

TEST_CASE("dot: a second initial state") {
  std::string text =
      "digraph g {\n  s0 -> s0 [label=\"a\"];\n  s1 -> s1 [label=\"a\"];\n  __start0 -> s0;\n"
      "  __start1 -> s1;\n}\n";
  auto e = load_error("two_starts.dot", text, "line 5");
  CHECK(contains(e.problem(), "second initial state"));
}

TEST_CASE("dot: only a start marker") {
  auto e = load_error("lonely.dot", "digraph g {\n  __start0;\n}\n");
  CHECK(contains(e.problem(), "no states"));
}

TEST_CASE("dot: states in order of first mention, comments and chains") {
  std::string text =
      "/* a comment with digraph { in it */\n"
      "digraph \"chain\" {\n"
      "  rankdir=LR; // graph attributes are not states\n"
      "  node [shape=circle];\n"
      "  z -> m -> a [label=\"t\"];\n"
      "  a -> z [label=\"t\"];\n"
      "  __start0 -> m;\n"
      "}\n";
  test::TempDir dir;
  Automaton a = load_automaton(test::write_file(dir, "chain.dot", text));
  CHECK(a.states() == std::vector<std::string>{"z", "m", "a"});
  CHECK(a.initial() == 1);
  CHECK(a.transitions() == Delta{{1, 2, 0}});
}

TEST_CASE("dot: one state without edges reads as an automaton with no letters") {
  const Automaton a = load_text("no_edges.dot", "digraph g {\n  s0;\n  __start0 -> s0;\n}\n");
  CHECK(a.state_count() == 1);
  CHECK(a.letter_count() == 0);
  CHECK(a.state_name(a.initial()) == "s0");
}
