#include <doctest/doctest.h>

#include "frontend_test_helpers.hpp"
#include "krc/automata/machine_outputs.hpp"

using namespace krc;
using test::contains;
using test::load_error;
using test::load_text;

namespace {
using Delta = std::vector<std::vector<StateId>>;

std::string jflap(const std::string& body, const std::string& type = "fa") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?><!--Created with JFLAP "
         "7.1.-->"
         "<structure>\n"  // line 1
         "\t<type>" +
         type +
         "</type>\n"          // line 2
         "\t<automaton>\n" +  // line 3
         body +
         "\t</automaton>\n</structure>\n";
}

std::string state(int id, const std::string& extra = "") {
  return "\t\t<state id=\"" + std::to_string(id) + "\" name=\"q" + std::to_string(id) + "\">" +
         extra + "</state>\n";
}

std::string transition(int from, int to, const std::string& read) {
  std::string r = read.empty() ? "<read/>" : "<read>" + read + "</read>";
  return "\t\t<transition><from>" + std::to_string(from) + "</from><to>" + std::to_string(to) +
         "</to>" + r + "</transition>\n";
}
}  // namespace

TEST_CASE("jflap: a JFLAP 7 sample (carriage returns as character references)") {
  Automaton a = load_automaton(test::frontend_data("jflap7_dfa.jff").string());
  CHECK(a.name() == "jflap7_dfa");
  CHECK(a.states() == std::vector<std::string>{"q0", "q1", "q2"});
  CHECK(a.letters() == std::vector<std::string>{"0", "1"});
  CHECK(a.initial() == 0);
  CHECK(a.accepting() == std::vector<StateId>{2});
  // 0: q0->q1, q1->q2, q2->q2;  1: q0->q0, q1->q0, q2->q2
  CHECK(a.transitions() == Delta{{1, 2, 2}, {0, 0, 2}});
}

TEST_CASE("jflap: a JFLAP 4 sample (no <automaton>, no names, word letters)") {
  Automaton a = load_automaton(test::frontend_data("jflap4_dfa.jff").string());
  CHECK(a.states() == std::vector<std::string>{"3", "7"});  // ids, as there are no names
  CHECK(a.letters() == std::vector<std::string>{"go", "stay"});
  CHECK(a.initial() == 1);
  CHECK(a.accepting() == std::vector<StateId>{0});
  // go: 3->7, 7->3;  stay: 3->3, 7->7
  CHECK(a.transitions() == Delta{{1, 0}, {0, 1}});
}

TEST_CASE("jflap: with --no-determinise an epsilon transition is an error at its line") {
  LoadOptions strict;
  strict.completion.determinise = false;
  std::string text = jflap(state(0, "<initial/>") +  // line 4
                           state(1) +                // line 5
                           transition(0, 1, "a") +   // line 6
                           transition(1, 0, ""));    // line 7
  auto e = load_error("epsilon.jff", text, "line 7", strict);
  CHECK(contains(e.problem(), "epsilon"));
}

TEST_CASE("jflap: with --no-determinise two targets for one state and letter are an error") {
  LoadOptions strict;
  strict.completion.determinise = false;
  std::string text = jflap(state(0, "<initial/>") + state(1) + transition(0, 1, "a") +
                           transition(1, 1, "a") + transition(0, 0, "a"));  // line 8
  auto e = load_error("nfa.jff", text, "line 8", strict);
  CHECK(contains(e.problem(), "nondeterminism"));
  CHECK(contains(e.problem(), "state 'q0'"));
  CHECK(contains(e.problem(), "letter 'a'"));
}

TEST_CASE("jflap: a type other than fa") {
  auto e = load_error("turing.jff", jflap(state(0, "<initial/>"), "turing"), "line 2");
  CHECK(contains(e.problem(), "turing"));
}

TEST_CASE("jflap: a transition to an unknown state") {
  std::string text = jflap(state(0, "<initial/>") + transition(0, 5, "a"));  // line 5
  auto e = load_error("unknown.jff", text, "line 5");
  CHECK(contains(e.problem(), "'5'"));
}

TEST_CASE("jflap: malformed XML names the line") {
  // Line 5: an unquoted attribute value.
  std::string text = jflap(state(0, "<initial/>") + "\t\t<state id=\"1\" name=q1></state>\n");
  auto e = load_error("malformed.jff", text, "line 5");
  CHECK(contains(e.problem(), "not valid XML"));
  // Cut short: the end of the data.
  auto cut = load_error("cut.jff", jflap(state(0, "<initial/>")).substr(0, 150));
  CHECK(contains(cut.problem(), "not valid XML"));
}

TEST_CASE("jflap: no initial state (the first is), and a partial DFA") {
  CHECK(load_text("no_initial.jff",
                  jflap(state(0) + state(1) + transition(0, 1, "a") + transition(1, 0, "a")))
            .initial() == 0);

  std::string partial =
      jflap(state(0, "<initial/>") + state(1) + transition(0, 1, "a"));  // q1 on line 5
  auto p = load_error("partial.jff", partial, "line 5");
  CHECK(contains(p.problem(), "state 'q1'"));
  CHECK(contains(p.problem(), "letter 'a'"));
}

TEST_CASE("jflap: not a JFLAP file") {
  auto e = load_error("other.jff", "<?xml version=\"1.0\"?>\n<html><body/></html>\n");
  CHECK(contains(e.problem(), "<structure>"));
}

TEST_CASE("jflap: two states with one id") {
  std::string text = jflap(state(0, "<initial/>") + state(0) + transition(0, 0, "a"));  // line 5
  auto e = load_error("same_id.jff", text, "line 5");
  CHECK(contains(e.problem(), "id '0'"));
}

TEST_CASE("jflap: repeated names fall back to ids") {
  std::string text = jflap(
      "\t\t<state id=\"4\" name=\"q\"><initial/></state>\n"
      "\t\t<state id=\"9\" name=\"q\"></state>\n" +
      transition(4, 9, "a") + transition(9, 4, "a"));
  test::TempDir dir;
  Automaton a = load_automaton(test::write_file(dir, "twins.jff", text));
  CHECK(a.states() == std::vector<std::string>{"4", "9"});
  CHECK(a.transitions() == Delta{{1, 0}});
}

namespace {
// A JFLAP 7 Mealy transition: <transout> is the output (JFLAP's MealyTransducer).
std::string mealy_transition(int from, int to, const std::string& read, const std::string& out) {
  return "\t\t<transition><from>" + std::to_string(from) + "</from><to>" + std::to_string(to) +
         "</to><read>" + read + "</read>" +
         (out.empty() ? "<transout/>" : "<transout>" + out + "</transout>") + "</transition>\n";
}
}  // namespace

TEST_CASE("jflap: a mealy file's <transout> outputs, answered at every position") {
  // q0 -a/x-> q1, q0 -b/y-> q0, q1 -a/z-> q0, q1 -b/(empty)-> q1.
  const std::string text =
      jflap(state(0, "<initial/>") + state(1) + mealy_transition(0, 1, "a", "x") +
                mealy_transition(0, 0, "b", "y") + mealy_transition(1, 0, "a", "z") +
                mealy_transition(1, 1, "b", ""),
            "mealy");
  MachineOutputs outputs;
  LoadOptions options;
  options.completion.outputs = &outputs;
  const Automaton a = load_text("m.jff", text, options);
  REQUIRE(a.letters() == std::vector<std::string>{"a", "b"});
  // [letter][state], as the file lists them; the empty output is JFLAP's λ.
  CHECK(outputs.mealy == std::vector<std::vector<std::string>>{{"x", "z"}, {"y", "λ"}});
  CHECK(outputs.moore.empty());
  CHECK(default_output(a, outputs) == OutputKind::Mealy);
  // a b b a a: q0 -x-> q1 -λ-> q1 -λ-> q1 -z-> q0 -x-> q1, read off the file by hand.
  const OutputMachine m = output_machine(a, outputs, OutputKind::Mealy);
  std::vector<std::string> answered;
  for (StateId q : m.automaton.run(std::vector<LetterId>{0, 1, 1, 0, 0}))
    answered.push_back(m.output[q]);
  CHECK(answered == std::vector<std::string>{"-", "x", "λ", "λ", "z", "x"});
}

TEST_CASE("jflap: a moore file's state <output>, answered at every position") {
  // q0 (out 0) -a-> q1 (out 1) -a-> q2 (out 0) -a-> q0; b stays.
  const std::string text =
      jflap(state(0, "<initial/><output>0</output>") + state(1, "<output>1</output>") +
                state(2, "<output>0</output>") + transition(0, 1, "a") + transition(1, 2, "a") +
                transition(2, 0, "a") + transition(0, 0, "b") + transition(1, 1, "b") +
                transition(2, 2, "b"),
            "moore");
  MachineOutputs outputs;
  LoadOptions options;
  options.completion.outputs = &outputs;
  const Automaton a = load_text("m.jff", text, options);
  CHECK(outputs.moore == std::vector<std::string>{"0", "1", "0"});
  CHECK(outputs.mealy.empty());
  CHECK(default_output(a, outputs) == OutputKind::Moore);
  const OutputMachine m = output_machine(a, outputs, OutputKind::Moore);
  CHECK(m.automaton.state_count() == 3);  // q0 and q2 answer alike but not after "a"
  std::vector<std::string> answered;
  for (StateId q : m.automaton.run(std::vector<LetterId>{0, 1, 0, 0, 1, 0}))
    answered.push_back(m.output[q]);
  CHECK(answered == std::vector<std::string>{"0", "1", "1", "0", "0", "0", "1"});
  // An fa file's <output> elements are not outputs.
  CHECK(load_text("f.jff", jflap(state(0, "<initial/><output>7</output>") + transition(0, 0, "a")),
                  options)
            .state_count() == 1);
  CHECK(outputs.moore.empty());
}

TEST_CASE("jflap: several <initial/> states make an NFA from all of them") {
  const std::string text = jflap(state(0, "<initial/>") + state(1, "<initial/><final/>") +
                                 transition(0, 0, "a") + transition(1, 0, "b"));
  Automaton a = load_text("two.jff", text);
  CHECK(a.state_name(a.initial()) == "{q0,q1}");
  CHECK(a.accepting() == std::vector<StateId>{a.initial()});
  LoadOptions strict;
  strict.completion.determinise = false;
  CHECK(contains(load_error("two.jff", text, "", strict).problem(), "second initial state 'q1'"));
}
