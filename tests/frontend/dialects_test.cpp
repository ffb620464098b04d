// Dialects met in real files: HTML labels (AALpy's TLS models), files without a start marker
// (--initial), AALpy's probabilistic formats (refused), JFLAP 8, and format detection.
// Expected automata are read off the small files in tests/frontend/data by hand.
#include <doctest/doctest.h>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;
using test::load_error;
using test::load_text;

namespace {
using Delta = std::vector<std::vector<StateId>>;

std::string dot_with_labels(const std::vector<std::string>& labels) {
  std::string text = "digraph g {\n  __start0 -> s0;\n";
  for (const auto& label : labels) text += "  s0 -> s0 [label=" + label + "];\n";
  return text + "}\n";
}

// A JFLAP 8 file: states 0..n-1 (named qI) on lines 4.., `start` (-1: none), and (from, to,
// input) transitions, one per line from line n + 7 on.
std::string jflap8(int n, int start, const std::vector<std::tuple<int, int, std::string>>& moves,
                   const std::string& type = "fsa") {
  auto ref = [](int q) {
    return "<name>q" + std::to_string(q) + "</name><id>" + std::to_string(q) + "</id>";
  };
  auto state = [&](int q) { return "<state>" + ref(q) + "</state>"; };
  std::string text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<structure type=\"" + type +
                     "\">\n<structure type=\"state_set\">\n";  // lines 1-3
  for (int q = 0; q < n; ++q) text += state(q) + "\n";
  text += "</structure>\n<structure type=\"start_state\">" + (start < 0 ? "" : state(start)) +
          "</structure>\n<structure type=\"transition_set\">\n";
  for (const auto& [from, to, input] : moves)
    text += "<fsa_trans><to>" + ref(to) + "</to>" +
            (input.empty() ? "<input/>" : "<input>" + input + "</input>") + "<from>" + ref(from) +
            "</from></fsa_trans>\n";
  return text + "</structure>\n</structure>\n";
}
}  // namespace

TEST_CASE("dot: HTML labels read the inputs before <br>, one edge per input joined by '|'") {
  Automaton a = load_automaton(test::frontend_data("tls_html_labels.dot").string());
  // States by label; the HTML label <<b>closed</b>> names s2 by its text.
  CHECK(a.states() == std::vector<std::string>{"0", "1", "closed"});
  CHECK(a.letters() ==
        std::vector<std::string>{"ClientHello", "Finished", "ApplicationData", "Alert & Close"});
  CHECK(a.initial() == 0);
  // ClientHello: 0->1, 1->1, 2->2; Finished: 0->2, 1->0, 2->2;
  // ApplicationData: 0->2, 1->2, 2->2; Alert & Close: 0->2, 1->2, 2->2.
  CHECK(a.transitions() == Delta{{1, 1, 2}, {2, 0, 2}, {2, 2, 2}, {2, 2, 2}});
}

TEST_CASE("dot: an HTML label without <br> reads like a quoted one, a quoted '<b>' is a letter") {
  Automaton a = load_text("labels.dot", dot_with_labels({"<x / 1>", "\"<b>\"", "<&lt;y&gt;>",
                                                         "<say \"hi\" \\ bye<br/>out>"}));
  CHECK(a.letters() == std::vector<std::string>{"x", "<b>", "<y>", "say \"hi\" \\ bye"});
  auto e = load_error("empty.dot", dot_with_labels({"<a | | b<br />out>"}), "line 3");
  CHECK(contains(e.problem(), "empty input"));
}

TEST_CASE("without a start marker the first state is initial; --initial names another") {
  const std::string path = test::frontend_data("ssh_no_start.dot").string();
  std::vector<std::string> notes;
  LoadOptions noted;
  noted.completion.note = [&](const std::string& note) { notes.push_back(note); };
  CHECK(load_automaton(path, noted).initial() == 0);
  REQUIRE(notes.size() == 1);
  CHECK(contains(notes[0], "the first state listed, 's0', is initial"));
  LoadOptions options;
  options.completion.initial = "s1";
  Automaton a = load_automaton(path, options);
  CHECK(a.states() == std::vector<std::string>{"s0", "s1"});
  CHECK(a.letters() == std::vector<std::string>{"KEXINIT", "SERVICE_REQUEST"});
  CHECK(a.initial() == 1);
  CHECK(a.transitions() == Delta{{1, 1}, {0, 0}});
  // A name that is no state lists the states.
  options.completion.initial = "s9";
  auto unknown = load_error("ssh.dot", test::read_text(path), "", options);
  CHECK(contains(unknown.problem(), "--initial 's9'"));
  CHECK(contains(unknown.problem(), "'s0', 's1'"));
}

TEST_CASE("--initial overrides the file's start in every format, and may name the sink") {
  LoadOptions options;
  options.completion.initial = "r2";
  for (const char* file : {"mod3.json", "mod3.dot", "mod3.jff"}) {
    CAPTURE(file);
    Automaton plain = load_automaton(test::frontend_data(file).string());
    Automaton moved = load_automaton(test::frontend_data(file).string(), options);
    CHECK(plain.initial() != moved.initial());
    CHECK(moved.state_name(moved.initial()) == "r2");
    CHECK(moved.transitions() == plain.transitions());
  }
  // The sink that --complete adds is a state like any other.
  options.completion = {};
  options.completion.add_sink = true;
  options.completion.initial = "sink";
  Automaton partial = load_text("partial.dot",
                                "digraph g {\n  __start0 -> s0;\n  s0 -> s0 [label=\"a\"];\n"
                                "  s0 -> s0 [label=\"b\"];\n  s1 -> s0 [label=\"a\"];\n}\n",
                                options);
  CHECK(partial.states() == std::vector<std::string>{"s0", "s1", "sink"});
  CHECK(partial.initial() == 2);
}

TEST_CASE("--initial stands in for a missing initial state in JSON; JFLAP takes the first") {
  const std::string json = R"({"states": ["a"], "alphabet": ["x"], "transitions": {"x": ["a"]}})";
  auto json_error = load_error("no_initial.json", json, "/");
  CHECK(contains(json_error.problem(), "--initial"));
  CHECK(load_text("no_initial.jff", jflap8(2, -1, {{0, 1, "x"}, {1, 0, "x"}})).initial() == 0);
  LoadOptions options;
  options.completion.initial = "a";
  CHECK(load_text("no_initial.json", json, options).initial() == 0);
  options.completion.initial = "q0";
  CHECK(load_text("no_initial.jff", jflap8(1, -1, {{0, 0, "x"}}), options).initial() == 0);
}

TEST_CASE("dot: an AALpy MDP, stochastic Mealy machine or Markov chain is refused as such") {
  auto mdp = load_error("faulty.dot", test::read_text(test::frontend_data("faulty_mdp.dot")),
                        "line 7");  // the first probability below 1
  CHECK(contains(mdp.problem(), "Markov decision process"));
  CHECK(contains(mdp.problem(), "'d:0.9'"));
  auto smm = load_error("smm.dot", dot_with_labels({"\"a/x:0.5\"", "\"a/y:0.5\""}), "line 3");
  CHECK(contains(smm.problem(), "stochastic Mealy machine"));
  auto chain = load_error("chain.dot", dot_with_labels({"\"0.25\"", "\"0.75\""}), "line 3");
  CHECK(contains(chain.problem(), "Markov chain"));
  // Letters that look like probabilities do not make a DFA probabilistic: 0 and 1 are not
  // strictly between 0 and 1.
  Automaton binary = load_text(
      "binary.dot",
      "digraph g {\n  __start0 -> s0;\n  s0 -> s1 [label=\"1\"];\n  s0 -> s0 [label=\"0\"];\n"
      "  s1 -> s0 [label=\"1\"];\n  s1 -> s1 [label=\"0\"];\n}\n");
  CHECK(binary.letters() == std::vector<std::string>{"1", "0"});
}

TEST_CASE("jflap: a JFLAP 8 finite automaton (nested <structure type=...>)") {
  Automaton a = load_automaton(test::frontend_data("jflap8_fsa.jff").string());
  CHECK(a.states() == std::vector<std::string>{"q0", "q1", "q2"});
  CHECK(a.letters() == std::vector<std::string>{"a", "b"});
  CHECK(a.initial() == 1);
  CHECK(a.accepting() == std::vector<StateId>{2});
  CHECK(a.transitions() == Delta{{0, 1, 2}, {1, 2, 0}});  // a keeps the state, b counts mod 3
}

TEST_CASE("jflap: JFLAP 8 Mealy machines read their inputs, errors name lines") {
  Automaton mealy =
      load_text("mealy.jff", jflap8(2, 0, {{0, 1, "A"}, {1, 0, "A"}}, "mealy_machine"));
  CHECK(mealy.letters() == std::vector<std::string>{"A"});
  CHECK(mealy.transitions() == Delta{{1, 0}});
  // Two states: the transitions are on lines 9, 10, 11. NFAs are errors with --no-determinise.
  LoadOptions strict;
  strict.completion.determinise = false;
  auto nfa = load_error("nfa.jff", jflap8(2, 0, {{0, 1, "A"}, {1, 0, "A"}, {0, 0, "A"}}), "line 11",
                        strict);
  CHECK(contains(nfa.problem(), "nondeterminism"));
  CHECK(contains(nfa.problem(), "line 9"));  // the first transition of q0 on A
  auto epsilon = load_error("eps.jff", jflap8(2, 0, {{0, 1, "A"}, {1, 0, ""}}), "line 10", strict);
  CHECK(contains(epsilon.problem(), "epsilon"));
  auto pda = load_error("pda.jff", jflap8(1, 0, {{0, 0, "A"}}, "pda"));
  CHECK(contains(pda.problem(), "JFLAP 8"));
  CHECK(contains(pda.problem(), "'pda'"));
  auto partial = load_error("partial.jff", jflap8(2, 0, {{0, 1, "A"}}), "line 5");  // q1
  CHECK(contains(partial.problem(), "state 'q1'"));
}

TEST_CASE("format: a DOT file opening with 'digraph {' reads as DOT whatever its name") {
  const std::string text = "digraph {\n  __start0 -> s0;\n  s0 -> s0 [label=\"a\"];\n}\n";
  for (const char* name : {"anonymous.dot", "anonymous", "anonymous.txt"}) {
    CAPTURE(name);
    Automaton a = load_text(name, text);
    CHECK(a.letters() == std::vector<std::string>{"a"});
  }
  CHECK(detect_format("x", text) == "dot");
  CHECK(detect_format("x.jff", text) == "jff");  // the extension comes first
  // A weights file is not an automaton description, and says so.
  auto weights = load_error("model", std::string("\x08\0\0\0\0\0\0\0{\"a\":1} ", 16));
  CHECK(contains(weights.problem(), "weights"));
}
