// Issue 34, item 4, for machines with outputs: a partial Mealy or Moore machine is completed by
// default with a sink state whose outputs are the reserved undefined output (AutomataLib and
// LearnLib leave such a transition undefined, AALpy raises there), said in a note; --complete
// builds the same machine silently; a semiautomaton still asks. The expectations come from the
// files' own text, read here by a few regular expressions, not from krc's readers.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>

#include "frontend_test_helpers.hpp"
#include "krc/automata/automaton_builder.hpp"
#include "krc/automata/machine_outputs.hpp"

using namespace krc;
using test::contains;

namespace {

std::filesystem::path realworld(const std::string& name) {
  return test::source_dir() / "tests" / "reference" / "realworld" / "files" / name;
}

// A Mealy machine as its DOT text spells it (AutomataLib's writer: nodes `s0 [... label="n0"]`,
// edges `s0 -> s3 [label="a / x"]`, the start marker `__start0 -> s0`).
struct FileMealy {
  std::map<std::string, std::string> name;  // node id -> label
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> edge;
  std::vector<std::string> letters;  // sorted
  std::string initial;
};

FileMealy read_by_hand(const std::string& text) {
  FileMealy m;
  const std::regex node(R"re((\w+) \[shape="\w+" label="([^"]*)"\])re");
  const std::regex edge(R"re((\w+) -> (\w+) \[label="([^"/]*) / ([^"]*)"\])re");
  const std::regex start(R"re(__start0 -> (\w+);)re");
  for (std::sregex_iterator it(text.begin(), text.end(), node), end; it != end; ++it)
    m.name[(*it)[1]] = (*it)[2];
  std::set<std::string> letters;
  for (std::sregex_iterator it(text.begin(), text.end(), edge), end; it != end; ++it) {
    m.edge[{(*it)[1], (*it)[3]}] = {(*it)[2], (*it)[4]};
    letters.insert((*it)[3]);
  }
  m.letters.assign(letters.begin(), letters.end());
  std::smatch s;
  REQUIRE(std::regex_search(text, s, start));
  m.initial = s[1];
  return m;
}

// The file's outputs along `word`: its transitions' outputs while they are defined, then
// kUndefinedOutput at the first missing transition and at every later letter.
std::vector<std::string> file_outputs(const FileMealy& m, const std::vector<std::string>& word) {
  std::vector<std::string> out;
  std::optional<std::string> q = m.initial;
  for (const auto& letter : word) {
    auto it = q ? m.edge.find({*q, letter}) : m.edge.end();
    if (it == m.edge.end()) {
      q.reset();
      out.push_back(kUndefinedOutput);
      continue;
    }
    out.push_back(it->second.second);
    q = it->second.first;
  }
  return out;
}

// krc's outputs along `word`: the Mealy table read with the automaton, and the Moore machine
// krc compiles (output_machine: what the network answers after each prefix).
std::vector<std::string> krc_outputs(const Automaton& a, const MachineOutputs& outputs,
                                     const std::vector<std::string>& word) {
  const OutputMachine machine = output_machine(a, outputs, OutputKind::Mealy);
  std::vector<std::string> out;
  StateId q = a.initial(), p = machine.automaton.initial();
  CHECK(machine.output[p] == "-");
  for (const auto& letter : word) {
    const auto l = static_cast<LetterId>(a.find_letter(letter));
    out.push_back(outputs.mealy.at(l).at(q));
    q = a.step(q, l);
    p = machine.automaton.step(p, l);
    CHECK(machine.output[p] == out.back());
  }
  return out;
}

// Every word of up to `length` letters over `letters`.
std::vector<std::vector<std::string>> words(const std::vector<std::string>& letters,
                                            std::size_t length) {
  std::vector<std::vector<std::string>> all{{}};
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].size() < length)
      for (const auto& l : letters) {
        all.push_back(all[i]);
        all.back().push_back(l);
      }
  return all;
}

struct Loaded {
  Automaton automaton;
  MachineOutputs outputs;
  std::vector<std::string> notes;
};

Loaded load(const std::string& path, bool complete) {
  MachineOutputs outputs;
  std::vector<std::string> notes;
  LoadOptions options;
  options.completion.outputs = &outputs;
  options.completion.add_sink = complete;
  options.completion.note = [&](const std::string& n) { notes.push_back(n); };
  Automaton a = load_automaton(path, options);
  return {std::move(a), std::move(outputs), std::move(notes)};
}

}  // namespace

TEST_CASE("partial Mealy machines: AutomataLib's files agree with their text on every word") {
  for (const char* name :
       {"automatalib__incremental_mealy_dag.dot", "automatalib__serialization_mealy.dot"}) {
    CAPTURE(name);
    const FileMealy file = read_by_hand(test::read_text(realworld(name)));
    const Loaded plain = load(realworld(name).string(), false);
    auto letters = plain.automaton.letters();  // krc's order: first appearance
    std::sort(letters.begin(), letters.end());
    CHECK(letters == file.letters);
    for (const auto& word : words(file.letters, 5)) {
      CAPTURE(word);
      CHECK(krc_outputs(plain.automaton, plain.outputs, word) == file_outputs(file, word));
    }
    // One note, with the number of missing transitions the text leaves out.
    const std::size_t missing = file.name.size() * file.letters.size() - file.edge.size();
    REQUIRE(plain.notes.size() == 1);
    CHECK(contains(plain.notes[0], "a partial Mealy machine: its " + std::to_string(missing) +
                                       " missing transitions go to a sink state 'sink'"));
    CHECK(contains(plain.notes[0], "outputs '(undefined)'"));
    // --complete: the same machine and outputs, and nothing to say.
    const Loaded asked = load(realworld(name).string(), true);
    CHECK(asked.automaton == plain.automaton);
    CHECK(asked.outputs.mealy == plain.outputs.mealy);
    CHECK(asked.notes.empty());
  }
}

TEST_CASE("partial Mealy machines: AutomataLib's TAF file, by hand") {
  const Loaded m = load(test::frontend_data("taf/automatalib_mealy.taf").string(), false);
  // init -Hello/World-> s1, init -?/err-> sink (the wildcard), s1 -?/!-> sink (the first of
  // its '?' lines), sink -*/err-> sink; s1 has no transition on Hello.
  using W = std::vector<std::string>;
  CHECK(krc_outputs(m.automaton, m.outputs, {"Hello", "Hello", "?"}) ==
        W{"World", "(undefined)", "(undefined)"});
  CHECK(krc_outputs(m.automaton, m.outputs, {"Hello", "?", "Hello"}) == W{"World", "!", "err"});
  CHECK(krc_outputs(m.automaton, m.outputs, {"?", "Hello"}) == W{"err", "err"});
  CHECK(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) {
    return contains(n, "a partial Mealy machine: its 1 missing transition goes to a sink state");
  }));
}

TEST_CASE("partial Moore machines: the sink's output is the undefined output") {
  const std::string text =
      "digraph g {\n  __start0 -> a;\n  a [label=\"a / 0\"];\n"
      "  b [label=\"b / 1\" shape=doublecircle];\n  a -> b [label=\"x\"];\n"
      "  a -> a [label=\"y\"];\n  b -> a [label=\"x\"];\n}\n";
  test::TempDir dir;
  const std::string path = test::write_file(dir, "moore.dot", text);
  const Loaded m = load(path, false);
  REQUIRE(m.automaton.states() == std::vector<std::string>{"a", "b", "sink"});
  CHECK(m.outputs.moore == std::vector<std::string>{"0", "1", "(undefined)"});
  // By hand: y x y x reads a, a, b, then b has no y: the sink, which stays.
  const auto path_states =
      m.automaton.run(std::vector<LetterId>{1, 0, 1, 0});  // letters x (0), y (1)
  CHECK(path_states == std::vector<StateId>{0, 0, 1, 2, 2});
  REQUIRE(m.notes.size() == 1);
  CHECK(contains(m.notes[0],
                 "a partial Moore machine: its 1 missing transition goes to a sink "
                 "state 'sink' (a missing transition enters a state whose output "
                 "is '(undefined)'"));
  CHECK(load(path, true).outputs.moore == m.outputs.moore);
}

TEST_CASE("partial Mealy machines: the undefined output never takes a name the file outputs") {
  test::TempDir dir;
  const std::string path =
      test::write_file(dir, "clash.dot",
                       "digraph g {\n  __start0 -> a;\n  a -> b [label=\"x / (undefined)\"];\n"
                       "  a -> a [label=\"y / 0\"];\n  b -> a [label=\"x / 1\"];\n}\n");
  const Loaded m = load(path, false);
  const auto x = static_cast<LetterId>(m.automaton.find_letter("x"));
  const auto y = static_cast<LetterId>(m.automaton.find_letter("y"));
  CHECK(m.outputs.mealy[x][0] == "(undefined)");   // the file's own output
  CHECK(m.outputs.mealy[y][1] == "(undefined)'");  // b's missing y
  CHECK(m.outputs.mealy[x][2] == "(undefined)'");  // and the sink's
  REQUIRE(m.notes.size() == 1);
  CHECK(contains(m.notes[0], "outputs '(undefined)''"));
}

TEST_CASE("partial semiautomata still ask; FlexFringe's PAutomaC models say what they mean") {
  // No accepting state, no outputs: a missing transition means nothing yet.
  auto bare =
      test::load_error("bare.json", R"({"states": ["a", "b"], "alphabet": ["x"], "initial": "a",
                       "transitions": {"x": ["b", null]}})");
  CHECK(contains(bare.problem(), "state 'b' has no transition on letter 'x'"));
  CHECK(contains(bare.problem(), "use --complete"));
  // FlexFringe writes only the transitions its training traces took: completed unasked.
  const auto path = test::frontend_data("flexfringe/1.pautomac.train.ff.final.dot").string();
  const Loaded plain = load(path, false);
  const Loaded asked = load(path, true);
  CHECK(plain.automaton == asked.automaton);
  CHECK(plain.automaton.state_count() == 3);  // the two states and the sink
  CHECK(std::any_of(plain.notes.begin(), plain.notes.end(), [](const std::string& n) {
    return contains(n, "a partial automaton: its ") &&
           contains(n, "no training trace read from that state");
  }));
  // A TAF dfa is an acceptor even with no accepting state (the empty language).
  test::TempDir dir;
  const std::string taf =
      test::write_file(dir, "e.taf", "dfa {a, b} {\n  s0 [initial] { a -> s0 }\n}\n");
  const Loaded empty = load(taf, false);
  CHECK(empty.automaton.states() == std::vector<std::string>{"s0", "sink"});
  REQUIRE(empty.notes.size() == 1);
  CHECK(contains(empty.notes[0], "rejects from there on (a TAF dfa is an acceptor)"));
  // FlexFringe's JSON output too: node 1 never read 'b'.
  const std::string json =
      test::write_file(dir, "ff.json",
                       R"({"nodes": [{"id": 0, "source": -1}, {"id": 1}], "edges": [
          {"source": "0", "target": "1", "name": "a"}, {"source": "0", "target": "0", "name": "b"},
          {"source": "1", "target": "0", "name": "a"}]})");
  const Loaded ff = load(json, false);
  CHECK(ff.automaton.states() == std::vector<std::string>{"0", "1", "sink"});
  CHECK(ff.automaton.step(1, static_cast<LetterId>(ff.automaton.find_letter("b"))) == 2);
  REQUIRE(ff.notes.size() == 1);
  CHECK(contains(ff.notes[0], "its 1 missing transition goes to a sink state 'sink'"));
}
