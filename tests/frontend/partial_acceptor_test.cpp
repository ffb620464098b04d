// Issue 34, item 4: a partial acceptor (accepting states, no Mealy or Moore outputs) means its
// missing transitions as "reject from here on", as JFLAP, AALpy, AutomataLib, MONA and Spot do:
// every reader completes it with a rejecting sink without --complete, and says so in a note.
// Files with no accepting state and no outputs still ask (Mealy and Moore machines:
// partial_machine_test.cpp).
#include <doctest/doctest.h>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;
using Delta = std::vector<std::vector<StateId>>;

namespace {

// Loads `text` as `name`, expecting the completed acceptor: states a, b and the sink, b
// accepting, b --y--> sink, and a note naming the one missing transition.
void check_completed(const std::string& name, const std::string& text) {
  CAPTURE(name);
  std::vector<std::string> notes;
  LoadOptions options;
  options.completion.note = [&](const std::string& note) { notes.push_back(note); };
  const Automaton a = test::load_text(name, text, options);
  REQUIRE(a.states() == std::vector<std::string>{"a", "b", "sink"});
  CHECK(a.transitions() == Delta{{1, 0, 2}, {0, 2, 2}});  // x, then y; the sink loops
  CHECK(a.accepting() == std::vector<StateId>{1});        // the sink rejects
  REQUIRE(notes.size() == 1);
  CHECK(contains(notes[0],
                 "a partial acceptor: its 1 missing transition goes to a rejecting "
                 "sink state 'sink'"));
  // --complete builds the same automaton, and then there is nothing to say.
  notes.clear();
  options.completion.add_sink = true;
  CHECK(test::load_text(name, text, options) == a);
  CHECK(notes.empty());
}

}  // namespace

TEST_CASE("partial acceptors: completed by default in JSON, DOT and JFLAP") {
  check_completed("partial.json", R"({"states": ["a", "b"], "alphabet": ["x", "y"],
      "initial": "a", "accepting": ["b"], "transitions": {"x": ["b", "a"], "y": ["a", null]}})");
  check_completed("partial.dot",
                  "digraph g {\n  __start0 -> a;\n  a [shape=circle];\n  b [shape=doublecircle];\n"
                  "  a -> b [label=\"x\"];\n  b -> a [label=\"x\"];\n  a -> a [label=\"y\"];\n}\n");
  check_completed("partial.jff",
                  "<structure><type>fa</type><automaton>\n"
                  "<state id=\"0\" name=\"a\"><initial/></state>\n"
                  "<state id=\"1\" name=\"b\"><final/></state>\n"
                  "<transition><from>0</from><to>1</to><read>x</read></transition>\n"
                  "<transition><from>1</from><to>0</to><read>x</read></transition>\n"
                  "<transition><from>0</from><to>0</to><read>y</read></transition>\n"
                  "</automaton></structure>\n");
}

TEST_CASE("partial acceptors: the sink takes a fresh name") {
  const Automaton a =
      test::load_text("sink.json", R"({"states": ["sink", "b"], "alphabet": ["x"], "initial": 0,
                       "accepting": [1], "transitions": {"x": [1, null]}})");
  CHECK(a.states() == std::vector<std::string>{"sink", "b", "sink'"});
  CHECK(a.transitions() == Delta{{1, 2, 2}});
}

TEST_CASE("partial files that are no acceptor and carry no outputs still ask for --complete") {
  // No accepting state: a semiautomaton, whose missing transition means nothing yet.
  auto bare =
      test::load_error("bare.json", R"({"states": ["a", "b"], "alphabet": ["x"], "initial": "a",
                       "transitions": {"x": ["b", null]}})");
  CHECK(contains(bare.problem(), "use --complete"));
  // Partial Mealy and Moore machines are completed with an undefined output:
  // partial_machine_test.cpp.
}
