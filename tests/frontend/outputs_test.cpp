// Outputs (krc compile --output-kind): the Moore machine of the chosen output, minimised
// modulo it, answers at every position what the file's machine answers. The oracle runs the
// file's machine from transitions the test reads out of the file's text with a regular
// expression (not krc's reader), on every short word and on long random ones.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <regex>

#include "frontend_test_helpers.hpp"
#include "krc/automata/machine_outputs.hpp"

using namespace krc;

namespace {

// A machine read from DOT lines `s0 -> s1[label="in/out"]`; the output of the last letter
// (Mealy), or of the state (Moore: `s0 [label="s0|1"]`, accepting: doublecircle).
struct FileMachine {
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> step;
  std::map<std::string, std::string> state_output;
  std::string initial;
};

FileMachine read_machine(const std::string& text) {
  FileMachine f;
  std::smatch m;
  const std::regex edge(R"re((\w+) -> (\w+)\s*\[label="?([^"/\]]*?)(?:/([^"\]]*))?"?\])re");
  const std::regex node(R"re((\w+) \[([^\]]*)\])re");
  for (auto it = text.cbegin(); std::regex_search(it, text.cend(), m, edge); it = m[0].second)
    f.step[{m[1], m[3]}] = {m[2], m[4]};
  for (auto it = text.cbegin(); std::regex_search(it, text.cend(), m, node); it = m[0].second) {
    const std::string attributes = m[2];
    std::smatch out;
    if (std::regex_search(attributes, out, std::regex(R"re(label="\w+\|(\w+)")re")))
      f.state_output[m[1]] = out[1];
    else
      f.state_output[m[1]] =
          attributes.find("doublecircle") != std::string::npos ? "accept" : "reject";
  }
  std::regex_search(text, m, std::regex(R"re(__start0 -> (\w+))re"));
  f.initial = m[1];
  return f;
}

// The output after every prefix: "-" then the Mealy outputs, or the state outputs.
std::vector<std::string> file_answers(const FileMachine& f, const std::vector<std::string>& word,
                                      bool mealy) {
  std::string q = f.initial;
  std::vector<std::string> out{mealy ? "-" : f.state_output.at(q)};
  for (const auto& a : word) {
    const auto& [to, output] = f.step.at({q, a});
    q = to;
    out.push_back(mealy ? output : f.state_output.at(q));
  }
  return out;
}

void check_answers(const std::string& file, OutputKind kind, std::size_t expected_states) {
  CAPTURE(file);
  const auto path = test::reference_dir() / "realworld" / "files" / file;
  MachineOutputs outputs;
  LoadOptions options;
  options.completion.outputs = &outputs;
  const Automaton a = load_automaton(path.string(), options);
  CHECK(default_output(a, outputs) == kind);
  const OutputMachine m = output_machine(a, outputs, kind);
  if (expected_states) CHECK(m.automaton.state_count() == expected_states);
  CHECK(m.automaton.state_count() <= m.before_minimising);
  const FileMachine f = read_machine(test::read_text(path));
  std::mt19937 rng(23);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<LetterId> word(trial < 100 ? trial % 4 : 64);
    for (auto& l : word) l = static_cast<LetterId>(rng() % a.letter_count());
    std::vector<std::string> named;
    for (LetterId l : word) named.push_back(a.letter_name(l));
    CAPTURE(named);
    std::vector<std::string> answered;
    for (StateId q : m.automaton.run(word)) answered.push_back(m.output[q]);
    REQUIRE(answered == file_answers(f, named, kind == OutputKind::Mealy));
    // The state's name starts with its output ("#k" tells states with one output apart).
    for (StateId q : m.automaton.run(word))
      CHECK(m.automaton.state_name(q).rfind(m.output[q], 0) == 0);
  }
}

}  // namespace

TEST_CASE("outputs: the TCP server's Mealy outputs at every position") {
  check_answers("aalpy__TCP_tcp_server_bsd_trans.dot", OutputKind::Mealy, 0);
  check_answers("aalpy__Angluin_Mealy.dot", OutputKind::Mealy, 0);
}

TEST_CASE("outputs: Moore outputs and accepting bits, minimised") {
  check_answers("aalpy__Angluin_Moore.dot", OutputKind::Moore, 0);
  // Tomita 3's five states: no two answer every word alike (its minimal DFA has 5 states).
  check_answers("aalpy__tomita_3.dot", OutputKind::Accepting, 5);
}

TEST_CASE("outputs: Moore's partition refinement merges states that answer alike") {
  // Three states, two of them (b, c) accepting with the same future: minimal has 2.
  const std::string text =
      "digraph g {\n__start0 -> a;\na -> b [label=\"x\"];\nb -> c [label=\"x\"];\n"
      "c -> b [label=\"x\"];\nb [shape=\"doublecircle\"];\nc [shape=\"doublecircle\"];\n}\n";
  const Automaton dfa = test::load_text("m.dot", text);
  const OutputMachine m = output_machine(dfa, {}, OutputKind::Accepting);
  CHECK(m.before_minimising == 3);
  CHECK(m.automaton.state_count() == 2);
  CHECK(m.automaton.states() == std::vector<std::string>{"reject", "accept"});
  // Asking for outputs the file lacks is an error that says which.
  CHECK_THROWS_WITH_AS(output_machine(dfa, {}, OutputKind::Mealy),
                       doctest::Contains("no Mealy outputs"), std::invalid_argument);
}
