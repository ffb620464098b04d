// NFAs (several targets for one state and letter, epsilon transitions) are determinised by the
// subset construction; --no-determinise refuses them; the construction is bounded. The oracle
// is the NFA itself, run here as a set of states over every short word, from transitions the
// test reads out of the file's text line by line (not through krc's readers).
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;

namespace {

struct TestNfa {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> delta;  // (q, letter)
  std::map<std::string, std::set<std::string>> epsilon;
  std::string initial;
  std::set<std::string> accepting, letters;
};

std::set<std::string> closure(const TestNfa& n, std::set<std::string> s) {
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& q : std::set<std::string>(s))
      if (auto it = n.epsilon.find(q); it != n.epsilon.end())
        for (const auto& r : it->second) grew = s.insert(r).second || grew;
  }
  return s;
}

bool nfa_accepts(const TestNfa& n, const std::vector<std::string>& word) {
  std::set<std::string> s = closure(n, {n.initial});
  for (const auto& a : word) {
    std::set<std::string> next;
    for (const auto& q : s)
      if (auto it = n.delta.find({q, a}); it != n.delta.end())
        next.insert(it->second.begin(), it->second.end());
    s = closure(n, next);
  }
  for (const auto& q : s)
    if (n.accepting.count(q)) return true;
  return false;
}

// Every word up to `length` over the DFA's letters: accepted by both or by neither.
void check_same_language(const Automaton& dfa, const TestNfa& nfa, std::size_t length) {
  CHECK(std::set<std::string>(dfa.letters().begin(), dfa.letters().end()) == nfa.letters);
  std::set<StateId> accepting(dfa.accepting().begin(), dfa.accepting().end());
  std::vector<std::vector<LetterId>> words{{}};
  for (std::size_t w = 0; w < words.size(); ++w) {
    std::vector<std::string> named;
    for (LetterId a : words[w]) named.push_back(dfa.letter_name(a));
    CAPTURE(named);
    CHECK(accepting.count(dfa.run(words[w]).back()) == (nfa_accepts(nfa, named) ? 1u : 0u));
    if (words[w].size() < length)
      for (LetterId a = 0; a < dfa.letter_count(); ++a) {
        words.push_back(words[w]);
        words.back().push_back(a);
      }
  }
}

// A DOT NFA as AutomataLib writes it: `s0 -> s1 [label="a"];`, doublecircle accepting.
TestNfa dot_nfa(const std::string& text) {
  TestNfa n;
  std::smatch m;
  const std::regex edge(R"re((\w+) -> (\w+) \[label="([^"]*)"\])re");
  const std::regex start(R"re(__start0 -> (\w+))re");
  const std::regex final(R"re((\w+) \[shape="doublecircle")re");
  for (auto it = text.begin(); std::regex_search(it, text.end(), m, edge); it = m[0].second) {
    n.delta[{m[1], m[3]}].insert(m[2]);
    n.letters.insert(m[3]);
  }
  if (std::regex_search(text, m, start)) n.initial = m[1];
  for (auto it = text.begin(); std::regex_search(it, text.end(), m, final); it = m[0].second)
    n.accepting.insert(m[1]);
  return n;
}

// The text of <tag>...</tag> in `block`; "" for <tag/> or none.
std::string element(const std::string& block, const std::string& tag) {
  std::smatch m;
  std::regex_search(block, m, std::regex("<" + tag + ">([^<]*)</" + tag + ">"));
  return m.empty() ? "" : m[1].str();
}

// A JFLAP 4-7 NFA: <state id=..> with <initial/>, <final/>; <transition> with from, to, read.
TestNfa jflap_nfa(const std::string& text) {
  TestNfa n;
  std::smatch m;
  const std::regex state(R"re(<state id="(\d+)"[^>]*>([\s\S]*?)</state>)re");
  const std::regex transition(R"re(<transition>([\s\S]*?)</transition>)re");
  for (auto it = text.begin(); std::regex_search(it, text.end(), m, state); it = m[0].second) {
    if (contains(m[2].str(), "<initial/>")) n.initial = m[1];
    if (contains(m[2].str(), "<final/>")) n.accepting.insert(m[1]);
  }
  for (auto it = text.begin(); std::regex_search(it, text.end(), m, transition); it = m[0].second) {
    const std::string block = m[1], from = element(block, "from"), to = element(block, "to"),
                      read = element(block, "read");
    if (read.empty()) {
      n.epsilon[from].insert(to);
    } else {
      n.delta[{from, read}].insert(to);
      n.letters.insert(read);
    }
  }
  return n;
}

std::string jflap_file(const std::string& states, const std::string& transitions) {
  return "<?xml version=\"1.0\"?><structure><type>fa</type><automaton>\n" + states + transitions +
         "</automaton></structure>\n";
}

}  // namespace

TEST_CASE("nfa: AutomataLib's NFA and JFLAP's nondeterministic example are determinised") {
  for (const std::string name :
       {"automatalib__serialization_nfa.dot", "jflapautograder__example.jff"}) {
    CAPTURE(name);
    const auto path = test::reference_dir() / "realworld" / "files" / name;
    const std::string text = test::read_text(path);
    std::vector<std::string> notes;
    LoadOptions options;
    options.completion.note = [&](const std::string& note) { notes.push_back(note); };
    const Automaton dfa = load_automaton(path.string(), options);
    check_same_language(dfa, path.extension() == ".jff" ? jflap_nfa(text) : dot_nfa(text), 7);
    REQUIRE(notes.size() == 1);
    CHECK(contains(notes[0], "into " + std::to_string(dfa.state_count()) + " subset states"));
    options.completion.determinise = false;
    try {
      load_automaton(path.string(), options);
      FAIL("read with --no-determinise");
    } catch (const InputError& e) {
      CHECK(contains(e.problem(), "nondeterminism"));
      CHECK(contains(e.place(), "line"));
    }
  }
}

TEST_CASE("nfa: epsilon transitions (JFLAP's lambda) are closed over") {
  // (a|b)*ab by a textbook epsilon-NFA: 0 -e-> 1, 1 -a,b-> 1, 1 -e-> 2, 2 -a-> 3, 3 -b-> 4,
  // 4 -e-> 0 (so a word may continue after ab).
  auto s = [](int id, const char* extra) {
    return "<state id=\"" + std::to_string(id) + "\" name=\"q" + std::to_string(id) + "\">" +
           extra + "</state>\n";
  };
  auto t = [](int from, int to, const char* read) {
    return "<transition><from>" + std::to_string(from) + "</from><to>" + std::to_string(to) +
           "</to>" + (*read ? std::string("<read>") + read + "</read>" : "<read/>") +
           "</transition>\n";
  };
  const std::string text =
      jflap_file(s(0, "<initial/>") + s(1, "") + s(2, "") + s(3, "") + s(4, "<final/>"),
                 t(0, 1, "") + t(1, 1, "a") + t(1, 1, "b") + t(1, 2, "") + t(2, 3, "a") +
                     t(3, 4, "b") + t(4, 0, ""));
  test::TempDir dir;
  const std::string path = test::write_file(dir, "eps.jff", text);
  const Automaton dfa = load_automaton(path);
  check_same_language(dfa, jflap_nfa(text), 8);
  LoadOptions strict;
  strict.completion.determinise = false;
  const InputError e = test::load_error("eps.jff", text, "line 7", strict);
  CHECK(contains(e.problem(), "epsilon"));
}

TEST_CASE("nfa: JFLAP's epsilon-only test_fa determinises to one state and no letters") {
  // Every transition reads nothing, so the subset construction makes the initial state's
  // epsilon closure alone: an automaton over the empty alphabet, whose only word is the empty
  // one, accepted when the closure holds a final state (here q5, reached from q0).
  const auto path = test::reference_dir() / "realworld" / "files" / "jflapcheck__test_fa.jff";
  const std::string text = test::read_text(path);
  const TestNfa nfa = jflap_nfa(text);
  REQUIRE(nfa.letters.empty());
  std::vector<std::string> notes;
  LoadOptions options;
  options.completion.note = [&](const std::string& note) { notes.push_back(note); };
  const Automaton dfa = load_automaton(path.string(), options);
  CHECK(dfa.state_count() == 1);
  CHECK(dfa.letter_count() == 0);
  CHECK(dfa.initial() == 0);
  // The closure, by the test's own reading of the file: all 18 states, q0 to q17.
  const std::set<std::string> reached = closure(nfa, {nfa.initial});
  CHECK(reached.size() == 18);
  CHECK(nfa_accepts(nfa, {}));
  CHECK(dfa.accepting() == std::vector<StateId>{0});
  check_same_language(dfa, nfa, 3);
  REQUIRE(notes.size() == 1);
  CHECK(contains(notes[0], "into 1 subset states"));
  // --no-determinise still refuses it, at the first epsilon transition.
  options.completion.determinise = false;
  try {
    load_automaton(path.string(), options);
    FAIL("read with --no-determinise");
  } catch (const InputError& e) {
    CHECK(contains(e.problem(), "epsilon"));
  }
}

TEST_CASE("nfa: the subset construction is bounded by --max-subset-states") {
  // "The k-th letter from the end is a": the subset construction reaches exactly 2^k subsets
  // (every subset of {1..k} with 0 added), the textbook blow-up.
  constexpr int k = 10;
  std::string text =
      "digraph g {\n__start0 -> s0;\ns0 -> s0 [label=\"a\"];\n"
      "s0 -> s0 [label=\"b\"];\ns0 -> s1 [label=\"a\"];\n";
  for (int i = 1; i < k; ++i)
    for (const char* a : {"a", "b"})
      text +=
          "s" + std::to_string(i) + " -> s" + std::to_string(i + 1) + " [label=\"" + a + "\"];\n";
  text += "s" + std::to_string(k) + " [shape=\"doublecircle\"];\n}\n";
  test::TempDir dir;
  const std::string path = test::write_file(dir, "blowup.dot", text);
  const Automaton dfa = load_automaton(path);
  CHECK(dfa.state_count() == (std::size_t{1} << k));
  check_same_language(dfa, dot_nfa(text), 12);
  LoadOptions small;
  small.completion.max_subset_states = 1000;
  try {
    load_automaton(path, small);
    FAIL("no limit");
  } catch (const LimitError& e) {
    CHECK(contains(e.what(), "--max-subset-states"));
    CHECK(contains(e.what(), "1000"));
  }
}

TEST_CASE("start markers: FlexFringe's I and MONA's init, but not AALpy's state I") {
  auto initial_of = [](const std::string& text, std::size_t states) {
    test::TempDir dir;
    const Automaton a = load_automaton(test::write_file(dir, "m.dot", text));
    CHECK(a.state_count() == states);
    return a.state_name(a.initial());
  };
  // FlexFringe: an undeclared I with one unlabelled edge.
  CHECK(initial_of("digraph DFA {\n0 [label=\"root\"];\n1 [label=\"x\"];\nI -> 1;\n"
                   "0 -> 1 [label=\"a\"];\n1 -> 0 [label=\"a\"];\n}\n",
                   2) == "x");
  // MONA / LTLf2DFA: init [shape = plaintext, label = ""]; init -> 1; the first state is 0.
  CHECK(initial_of("digraph MONA_DFA {\n node [shape = doublecircle]; 0;\n node [shape = "
                   "circle]; 1;\n init [shape = plaintext, label = \"\"];\n init -> 1;\n"
                   " 0 -> 1 [label=\"a\"];\n 1 -> 0 [label=\"a\"];\n}\n",
                   2) == "1");
  // AALpy Moore: I is a state (its edges have labels); without a marker the first is initial.
  CHECK(initial_of("digraph g {\nJ [label=\"J|0\"];\nI [label=\"I|1\"];\n"
                   "I -> J [label=\"a\"];\nJ -> I [label=\"a\"];\n}\n",
                   2) == "J|0");
}
