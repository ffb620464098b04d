#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <tuple>

#include "frontend_test_helpers.hpp"
#include "krc/automata/memory_budget.hpp"

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

TEST_CASE("dot: an edge without a label is an epsilon move (a lexer generator's NFA)") {
  const std::string text =
      "digraph g {\n  __start0 -> s0;\n  s0 -> s1;\n  s1 -> s2 [label=\"a\"];\n"
      "  s2 [shape=doublecircle];\n}\n";
  Automaton a = load_text("unlabelled.dot", text);
  CHECK(a.state_name(a.initial()) == "{s0,s1}");
  CHECK(a.state_name(a.step(a.initial(), 0)) == "{s2}");
  LoadOptions strict;
  strict.completion.determinise = false;
  CHECK(contains(load_error("unlabelled.dot", text, "line 3", strict).problem(), "epsilon"));
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

TEST_CASE("dot: several start markers: an NFA with every initial state") {
  std::string text =
      "digraph g {\n  s0 -> s0 [label=\"a\"];\n  s1 -> s1 [label=\"a\"];\n  __start0 -> s0;\n"
      "  __start1 -> s1;\n}\n";
  CHECK(load_text("two_starts.dot", text).state_name(0) == "{s0,s1}");
  LoadOptions strict;
  strict.completion.determinise = false;
  auto e = load_error("two_starts.dot", text, "line 5", strict);
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

TEST_CASE("dot: the empty node id \"\" is a state (an RPNI learner's empty prefix)") {
  Automaton a = load_text("rpni.dot",
                          "digraph g {\n  __start0 -> \"\";\n  \"\" -> \"a\" [label=\"a\"];\n"
                          "  \"a\" -> \"\" [label=\"a\"];\n}\n");
  CHECK(a.states() == std::vector<std::string>{"\"\"", "a"});
  CHECK(a.initial() == 0);
}

TEST_CASE("dot: MONA's bit vectors with don't-cares expand into every vector") {
  // As MONA and LTLf2DFA (through MONA) write DFAs: an `init` marker, tracks as bits.
  const std::string text =
      "digraph MONA_DFA {\n rankdir = LR;\n node [shape = doublecircle]; 3;\n"
      " node [shape = circle]; 1; 2;\n init [shape = plaintext, label = \"\"];\n init -> 1;\n"
      " 1 -> 2 [label=\"XX\"];\n 2 -> 3 [label=\"1X\"];\n 2 -> 2 [label=\"0X\"];\n"
      " 3 -> 3 [label=\"X0,01\"];\n 3 -> 2 [label=\"11\"];\n}\n";
  Automaton a = load_text("mona.dot", text);
  CHECK(a.letters() == std::vector<std::string>{"00", "01", "10", "11"});
  const auto s = [&](const char* name) { return static_cast<StateId>(a.find_state(name)); };
  for (LetterId l = 0; l < 4; ++l) CHECK(a.step(s("1"), l) == s("2"));
  CHECK(a.step(s("2"), 0) == s("2"));
  CHECK(a.step(s("2"), 1) == s("2"));
  CHECK(a.step(s("2"), 2) == s("3"));
  CHECK(a.step(s("2"), 3) == s("3"));
  CHECK(a.step(s("3"), 0) == s("3"));  // X0
  CHECK(a.step(s("3"), 1) == s("3"));  // 01
  CHECK(a.step(s("3"), 2) == s("3"));  // X0
  CHECK(a.step(s("3"), 3) == s("2"));  // 11
  // Labels of 0s and 1s alone stay letters.
  CHECK(load_text("bits.dot",
                  "digraph g {\n  __start0 -> a;\n  a -> a [label=\"0\"];\n"
                  "  a -> a [label=\"1\"];\n}\n")
            .letters() == std::vector<std::string>{"0", "1"});
}

TEST_CASE("dot: Spot's and LTLf2DFA's guards expand into valuations") {
  const std::string text =
      "digraph \"F(a & X b)\" {\n  I [label=\"\", style=invis, width=0];\n  I -> 0;\n"
      "  0 -> 0 [label=\"!a\"];\n  0 -> 1 [label=\"a\"];\n  1 -> 2 [label=\"b\"];\n"
      "  1 -> 1 [label=\"a & !b\"];\n  1 -> 0 [label=\"!a & !b\"];\n  2 -> 2 [label=\"1\"];\n"
      "  2 [shape=doublecircle];\n}\n";
  Automaton a = load_text("spot.dot", text);
  CHECK(a.letters() == std::vector<std::string>{"!a&!b", "a&!b", "!a&b", "a&b"});
  const auto s = [&](const char* name) { return static_cast<StateId>(a.find_state(name)); };
  CHECK(a.step(s("0"), 0) == s("0"));
  CHECK(a.step(s("0"), 2) == s("0"));
  CHECK(a.step(s("0"), 1) == s("1"));
  CHECK(a.step(s("1"), 2) == s("2"));
  CHECK(a.step(s("1"), 3) == s("2"));
  CHECK(a.step(s("1"), 1) == s("1"));
  CHECK(a.step(s("1"), 0) == s("0"));
  for (LetterId l = 0; l < 4; ++l) CHECK(a.step(s("2"), l) == s("2"));
  // LTLf2DFA's spelling: ~ for not, true.
  Automaton l = load_text("ltlf.dot",
                          "digraph MONA_DFA {\n init -> 1;\n 1 -> 1 [label=\"~a\"];\n"
                          " 1 -> 2 [label=\"a\"];\n 2 -> 2 [label=\"true\"];\n}\n");
  CHECK(l.letters() == std::vector<std::string>{"!a", "a"});
  CHECK(l.step(l.initial(), 1) != l.initial());
}

TEST_CASE("dot: Spot's print_dot output: guards, the I marker, peripheries=2 accepting") {
  // Spot's DOT for the Büchi automaton of F dest, as a public repository embeds it (its
  // header, the invisible I marker, peripheries=2 on the accepting state, guard labels).
  const std::string text =
      "digraph \"Fdest\" {\n  rankdir=LR\n  label=\"\\n[Büchi]\"\n  labelloc=\"t\"\n"
      "  node [shape=\"circle\"]\n  I [label=\"\", style=invis, width=0]\n  I -> 1\n"
      "  0 [label=\"0\", peripheries=2]\n  0 -> 0 [label=\"1\"]\n  1 [label=\"1\"]\n"
      "  1 -> 0 [label=\"dest\"]\n  1 -> 1 [label=\"!dest\"]\n}\n";
  Automaton a = load_text("fdest.dot", text);
  CHECK(a.letters() == std::vector<std::string>{"!dest", "dest"});
  CHECK(a.state_name(a.initial()) == "1");
  CHECK(a.accepting() == std::vector<StateId>{static_cast<StateId>(a.find_state("0"))});
  // Accepted: the words with a letter where dest holds.
  CHECK(a.step(a.initial(), 0) == a.initial());
  CHECK(a.state_name(a.step(a.initial(), 1)) == "0");
  CHECK(a.state_name(a.step(a.step(a.initial(), 1), 0)) == "0");
}

TEST_CASE("dot: guards that stand for many transitions are counted before they are added") {
  // One label names 12 propositions (4,096 letters); 50,000 edges labelled "1" then stand for
  // 200 million transitions from a 1 MB file.
  std::string text = "digraph g {\n  __start0 -> s0;\n  s0 -> s0 [label=\"p0";
  for (int j = 1; j < 12; ++j) text += " & p" + std::to_string(j);
  text += "\"];\n";
  for (int i = 0; i < 50000; ++i)
    text += "  s" + std::to_string(i % 100) + " -> s" + std::to_string((i + 1) % 100) +
            " [label=\"1\"];\n";
  text += "}\n";
  const std::uint64_t budget = memory_budget();
  set_memory_budget(std::uint64_t{64} << 20);
  test::TempDir dir;
  const std::string path = test::write_file(dir, "flood.dot", text);
  CHECK_THROWS_WITH_AS(load_automaton(path), doctest::Contains("transitions the guards stand for"),
                       LimitError);
  set_memory_budget(budget);
}

// FlexFringe's model of PAutomaC set 1 (data/flexfringe/SOURCES.md): every edge label is the
// symbol, a line break and the count of traces. The oracle is the file's own text, read here
// with a regular expression: each edge `from -> to [label="symbol<newline>count"]` must be a
// transition on the letter `symbol`, and the letters are exactly the symbols (53, where
// reading the labels whole made 93 letters).
TEST_CASE("dot: FlexFringe's PAutomaC labels read as their symbols") {
  const auto path = test::frontend_data("flexfringe/1.pautomac.train.ff.final.dot");
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::regex edge(R"((\d+) -> (\d+) \[label="(\d+)\n(\d+)\")");
  std::set<std::string> symbols;
  std::vector<std::tuple<std::string, std::string, std::string>> edges;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), edge); it != std::sregex_iterator();
       ++it) {
    symbols.insert((*it)[3]);
    edges.emplace_back((*it)[1], (*it)[3], (*it)[2]);
  }
  REQUIRE(edges.size() == 97);  // every edge but the start marker I -> 0 (98 arrows)
  LoadOptions options;
  options.completion.add_sink = true;  // no accepting states: a semiautomaton, partial
  std::vector<std::string> notes;
  options.completion.note = [&](const std::string& note) { notes.push_back(note); };
  Automaton a = load_automaton(path.string(), options);
  CHECK(a.letter_count() == 53);
  CHECK(std::set<std::string>(a.letters().begin(), a.letters().end()) == symbols);
  // The states are named by their (last) labels, "0:#90788\n" and "1:#10233\n": found by the
  // number before the colon, as FlexFringe writes it.
  auto state = [&](const std::string& number) -> StateId {
    for (StateId q = 0; q < a.state_count(); ++q)
      if (a.state_name(q).rfind(number + ":", 0) == 0) return q;
    FAIL("no state " << number);
    return 0;
  };
  for (const auto& [from, symbol, to] : edges)
    CHECK(a.step(state(from), static_cast<LetterId>(a.find_letter(symbol))) == state(to));
  CHECK(a.initial() == state("0"));
  CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return contains(n, "PAutomaC labels 'symbol\\ncount': read as the symbol");
  }));
}

TEST_CASE("dot: PAutomaC labels only when every label is one") {
  // DOT's escape \n works as the literal line break does.
  Automaton escaped = load_text("p.dot",
                                "digraph g { __start0 -> a; a -> b [label=\"x\\n12\"];\n"
                                "b -> a [label=\"y\\n3\"]; a -> a [label=\"y\\n7\"];\n"
                                "b -> b [label=\"x\\n1\"]; }\n");
  CHECK(escaped.letters() == std::vector<std::string>{"x", "y"});
  // One label without a count: every label is read whole, as before.
  Automaton mixed = load_text("m.dot",
                              "digraph g { __start0 -> a; a -> a [label=\"x\\n12\"];\n"
                              "a -> a [label=\"y\"]; }\n");
  CHECK(mixed.letters() == std::vector<std::string>{"x\\n12", "y"});
}
