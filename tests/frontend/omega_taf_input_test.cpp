// RABIT .ba, GOAL .gff, AutomataLib .taf, mCRL2/LTSmin .fsm and mata .mata files
// (tests/frontend/data/{ba,gff,taf,fsm,vtf}, sources
// in their SOURCES.md). The oracles: each file's transitions read here by a few lines of
// string matching (not through krc's readers) and run as a set of states, and languages
// counted by hand from the files (in the comments).
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <sstream>

#include "frontend_test_helpers.hpp"
#include "krc/automata/machine_outputs.hpp"

using namespace krc;
using test::contains;

namespace {

// A nondeterministic automaton over named letters: the oracle.
struct Nfa {
  std::set<std::string> initial, accepting;
  std::multimap<std::pair<std::string, std::string>, std::string> delta;  // (q, letter) -> r
  bool accepts(const std::vector<std::string>& word) const {
    std::set<std::string> s = initial;
    for (const auto& a : word) {
      std::set<std::string> next;
      for (const auto& q : s) {
        auto [lo, hi] = delta.equal_range({q, a});
        for (auto it = lo; it != hi; ++it) next.insert(it->second);
      }
      s = next;
    }
    for (const auto& q : s)
      if (accepting.count(q)) return true;
    return false;
  }
};

// RABIT: a first line without a comma is the initial state; "l,p->q" lines; later lines
// without a comma are accepting. Brackets dropped.
Nfa read_ba(const std::string& text) {
  Nfa nfa;
  std::istringstream in(text);
  std::string line;
  bool first = true;
  auto bare = [](std::string s) {
    if (!s.empty() && s.front() == '[') s = s.substr(1, s.size() - 2);
    return s;
  };
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto comma = line.find(',');
    if (comma == std::string::npos) {
      (first ? nfa.initial : nfa.accepting).insert(bare(line));
    } else {
      const auto arrow = line.find("->");
      nfa.delta.insert({{bare(line.substr(comma + 1, arrow - comma - 1)), line.substr(0, comma)},
                        bare(line.substr(arrow + 2))});
    }
    first = false;
  }
  return nfa;
}

// Every word up to `length` over the automaton's letters, and 200 random longer ones: krc's
// acceptance equals the oracle's.
void check_language(const Automaton& a, const Nfa& nfa, std::size_t length) {
  test::check_language_against(
      a, [&](const std::vector<std::string>& word) { return nfa.accepts(word); }, length, 30);
}

using test::accepts;

}  // namespace

TEST_CASE("RABIT .ba: RABIT's fold.ba and an Ultimate Automizer automaton, read for finite words") {
  const auto fold = test::frontend_data("ba/rabit_fold.ba");
  std::vector<std::string> notes;
  LoadOptions options;
  options.completion.note = [&](const std::string& n) { notes.push_back(n); };
  Automaton a = load_automaton(fold.string(), options);
  // By hand: 6 states [0]..[5], deterministic, partial: a rejecting sink makes 7; letters a-d.
  CHECK(a.state_count() == 7);
  CHECK(a.letters() == std::vector<std::string>{"a", "b", "c", "d"});
  // [1] accepts and has no way on: the words of length 2 that reach it, nothing else.
  const std::set<std::string> two{"aa", "ac", "ba", "bb", "cb", "cc", "da"};
  for (const char* x : {"a", "b", "c", "d"})
    for (const char* y : {"a", "b", "c", "d"}) {
      CHECK(accepts(a, {x, y}) == (two.count(std::string(x) + y) > 0));
      CHECK_FALSE(accepts(a, {x}));
      CHECK_FALSE(accepts(a, {x, y, "a"}));
    }
  CHECK_FALSE(accepts(a, {}));
  CHECK(std::any_of(notes.begin(), notes.end(),
                    [](const std::string& n) { return contains(n, "read for finite words"); }));
  check_language(a, read_ba(test::read_text(fold)), 4);

  // Content sniffing: "0" then "1,0->1" is RABIT's, not JSON's or a file of numbers.
  const auto ultimate = test::frontend_data("ba/ultimate_alterndiv_A.ba");
  Automaton u = test::load_text("noext", test::read_text(ultimate));
  CHECK(detect_format("noext", test::read_text(ultimate)) == "ba");
  CHECK(detect_format("x", "[0]\na,[0]->[1]\n[1]\n") == "ba");
  // Letters in order of first appearance; 1 on '3' goes to 2 and 3: an NFA, determinised.
  CHECK(u.letters() == std::vector<std::string>{"1", "3", "4", "0", "2"});
  check_language(u, read_ba(test::read_text(ultimate)), 6);
}

TEST_CASE("RABIT .ba: conventions and malformed files") {
  // No initial line: the first transition's source; no accepting lines: every state accepts.
  Automaton a = test::load_text("t.ba", "a,p->q\nb,q->p\n");
  CHECK(accepts(a, {"a", "b", "a"}));
  CHECK_FALSE(accepts(a, {"b"}));
  CHECK(contains(test::load_error("x.ba", "[0]\na,[0]->[1]\nwhat is this\n", "line 3").problem(),
                 "expected a transition"));
  CHECK(contains(test::load_error("y.ba", "[0]\n[1]\na,[0]->[1]\n", "line 2").problem(),
                 "one initial state"));
  CHECK(contains(test::load_error("z.ba", "[0]\n,[0]->[1]\n", "line 2").problem(),
                 "without a label"));
  CHECK(contains(test::load_error("w.ba", "[0]\na,[0]->[1 2]\n", "line 2").problem(),
                 "expected a transition"));
}

TEST_CASE("GOAL .gff: a file GOAL wrote, its propositional labels as valuations") {
  const auto path = test::frontend_data("gff/goal_react_quickly_c0.gff");
  const std::string text = test::read_text(path);
  CHECK(detect_format("noext", text) == "gff");
  std::vector<std::string> notes;
  LoadOptions options;
  options.completion.note = [&](const std::string& n) { notes.push_back(n); };
  Automaton a = test::load_text("noext", text, options);
  CHECK(a.letter_count() == 16);  // 2^4 valuations of g0 r0 w0 w1
  CHECK(std::any_of(notes.begin(), notes.end(),
                    [](const std::string& n) { return contains(n, "Büchi"); }));
  // The oracle: <from>, <to>, <read> by string search; a letter "g0&!r0&w0&w1" satisfies a
  // label "~g0 w0" when each literal of the label is among the letter's.
  Nfa nfa;
  nfa.initial = {"0"};
  nfa.accepting = {"0", "1"};
  auto between = [&](std::size_t from, const std::string& open, const std::string& close) {
    const auto s = text.find(open, from) + open.size();
    return text.substr(s, text.find(close, s) - s);
  };
  std::size_t transitions = 0;
  for (std::size_t at = text.find("<transition "); at != std::string::npos;
       at = text.find("<transition ", at + 1)) {
    ++transitions;
    const std::string p = between(at, "<from>", "</"), q = between(at, "<to>", "</");
    std::istringstream label(between(at, "<read>", "</"));
    std::vector<std::string> literals;
    for (std::string l; label >> l;) literals.push_back(l[0] == '~' ? "!" + l.substr(1) : l);
    for (LetterId v = 0; v < a.letter_count(); ++v) {
      std::set<std::string> parts;
      std::istringstream name(a.letter_name(v));
      for (std::string part; std::getline(name, part, '&');) parts.insert(part);
      if (std::all_of(literals.begin(), literals.end(),
                      [&](const std::string& l) { return parts.count(l) > 0; }))
        nfa.delta.insert({{p, a.letter_name(v)}, q});
    }
  }
  CHECK(transitions == 5);
  check_language(a, nfa, 3);
  // By hand: from 0, g0 and w1 alone loop; with nothing true there is no transition.
  CHECK(accepts(a, {"g0&!r0&!w0&w1", "g0&!r0&!w0&w1"}));
  CHECK_FALSE(accepts(a, {"!g0&!r0&!w0&!w1"}));
}

TEST_CASE("GOAL .gff: refusals with the reason, classical alphabets, malformed files") {
  const auto parity = test::frontend_data("gff/quasy_response0_parity.gff");
  CHECK(
      contains(test::load_error("p.gff", test::read_text(parity), "line 98").problem(), "Parity"));
  const std::string classical =
      "<structure label-on=\"transition\" type=\"fa\"><alphabet type=\"classical\">"
      "<symbol>a</symbol><symbol>b</symbol></alphabet><stateSet><state sid=\"0\"/>"
      "<state sid=\"1\"/></stateSet><initialStateSet><stateID>0</stateID></initialStateSet>\n"
      "<transitionSet><transition tid=\"0\"><from>0</from><to>1</to><read>a</read></transition>\n"
      "<transition tid=\"1\"><from>1</from><to>0</to><read>b</read></transition>"
      "</transitionSet><acc type=\"buchi\"><stateID>1</stateID></acc></structure>\n";
  Automaton a = test::load_text("c.gff", classical);
  CHECK(accepts(a, {"a"}));
  CHECK(accepts(a, {"a", "b", "a"}));
  CHECK_FALSE(accepts(a, {"a", "b"}));
  std::string bad = classical;
  bad.replace(bad.find("<read>b</read>"), 14, "<read>c</read>");
  CHECK(contains(test::load_error("d.gff", bad, "line 3").problem(), "not a <symbol>"));
  bad = classical;
  bad.replace(bad.find("<to>0</to>"), 10, "<to>7</to>");
  CHECK(contains(test::load_error("e.gff", bad, "line 3").problem(), "'7' is not the sid"));
  CHECK(contains(test::load_error("f.gff", "<structure type=\"fa\"><alphabet", "").problem(),
                 "not valid XML"));
  std::string deep = "<structure label-on=\"transition\" type=\"fa\">";
  for (int i = 0; i < 200; ++i) deep += "<x>";
  CHECK(contains(test::load_error("g.gff", deep, "line 1").problem(), "nested"));
}

TEST_CASE("AutomataLib .taf: its parser tests' files, read as its builder reads them") {
  const auto path = test::frontend_data("taf/automatalib_dfa.taf");
  CHECK(detect_format("noext", test::read_text(path)) == "taf");
  std::vector<std::string> notes;
  LoadOptions options;
  options.completion.note = [&](const std::string& n) { notes.push_back(n); };
  Automaton a = load_automaton(path.string(), options);
  // By hand from the file and AbstractTAFBuilder: init, s1, sink, acc (in order of first
  // mention) and the completion's rejecting sink; only init accepts (acc's second
  // declaration has no options); init -a-> s1 -b-> acc -*-> init, init -b,c,d-> sink.
  CHECK(a.state_count() == 5);
  CHECK(a.letters() == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(accepts(a, {}));
  CHECK_FALSE(accepts(a, {"a"}));
  CHECK_FALSE(accepts(a, {"a", "b"}));
  for (const char* x : {"a", "b", "c", "d"}) CHECK(accepts(a, {"a", "b", x}));
  CHECK_FALSE(accepts(a, {"b", "a", "b", "a"}));
  CHECK_FALSE(accepts(a, {"a", "a"}));
  auto noted = [&](const std::string& what) {
    return std::any_of(notes.begin(), notes.end(),
                       [&](const std::string& n) { return contains(n, what); });
  };
  CHECK(noted("line 6, column 2: a second initial state 's1'"));
  CHECK(noted("line 12, column 2: state 'acc' declared twice"));

  MachineOutputs outputs;
  LoadOptions mealy;
  mealy.completion.outputs = &outputs;
  mealy.completion.add_sink = true;  // s1 has no transition on "Hello"
  notes.clear();
  mealy.completion.note = [&](const std::string& n) { notes.push_back(n); };
  Automaton m = load_automaton(test::frontend_data("taf/automatalib_mealy.taf").string(), mealy);
  CHECK(m.letters() == std::vector<std::string>{"Hello", "?"});
  CHECK(default_output(m, outputs) == OutputKind::Mealy);
  auto output = [&](const std::vector<std::string>& word) {
    std::vector<std::string> out;
    StateId q = m.initial();
    for (const auto& w : word) {
      const auto l = static_cast<LetterId>(m.find_letter(w));
      out.push_back(outputs.mealy.at(l).at(q));
      q = m.run(std::vector<LetterId>{l}, q).back();
    }
    return out;
  };
  // By hand: init -Hello/World-> s1 -?/!-> sink (the first of s1's three '?' lines), and
  // init's wildcard gives ?/err; the sink answers err.
  CHECK(output({"Hello", "?"}) == std::vector<std::string>{"World", "!"});
  CHECK(output({"?", "Hello", "?"}) == std::vector<std::string>{"err", "err", "err"});
  CHECK(noted("'asd' is not a letter of the alphabet"));
  CHECK(noted("the option 'sink'"));
  CHECK(noted("a second transition from 's1' on '?'"));

  // A mealy transition without an output: AutomataLib's grammar (TAF.jj, transDeclMealy)
  // makes '/ output' optional and builds the transition with a null output; read as ''.
  notes.clear();
  Automaton n = test::load_text(
      "n.taf", "mealy {a, b} {\n s [init] { a -> t  b / y -> s }\n t { a / x -> s  b -> t }\n}",
      mealy);
  m = n;
  // By hand: s -a/''-> t -b/''-> t -a/x-> s -b/y-> s.
  CHECK(output({"a", "b", "a", "b"}) == std::vector<std::string>{"", "", "x", "y"});
  CHECK(noted("line 2, column 15: a mealy transition without an output"));
}

TEST_CASE("AutomataLib .taf: malformed files name the line and column") {
  CHECK(contains(
      test::load_error("a.taf", "dfa {a, b} {\n  s0 [initial] { a -> }\n}", "line 2, column 23")
          .problem(),
      "expected the target state"));
  CHECK(contains(
      test::load_error("b.taf", "dfa {a} {\n  s0 { a -> s0 }\n", "line 3, column 1").problem(),
      "never closed"));
  CHECK(
      contains(test::load_error("c.taf", "dfa [d..a] { }", "line 1, column 6").problem(), "empty"));
  CHECK(contains(
      test::load_error("e.taf", "dfa {a} { s { a / x -> s } }", "line 1, column 17").problem(),
      "only a mealy machine"));
  CHECK(contains(
      test::load_error("f.taf", "dfa {a} { s { a -> s } } extra", "line 1, column 26").problem(),
      "after the automaton"));
  CHECK(contains(
      test::load_error("g.taf", "dfa {a} { /* never closed", "line 1, column 11").problem(),
      "comment"));
  CHECK(contains(test::load_error("h.taf", "dfa {\"a} { }", "line 1, column 6").problem(),
                 "never closed"));
}

TEST_CASE("FSM: mCRL2's example, read as its traces; probabilities and malformed files refused") {
  const auto path = test::frontend_data("fsm/mcrl2_fan.fsm");
  const std::string text = test::read_text(path);
  CHECK(detect_format("noext", text) == "fsm");
  Automaton a = test::load_text("noext", text);
  // The oracle: the transition lines after the second "---", states from 1, state 1 initial,
  // every state accepting (a trace).
  Nfa nfa;
  nfa.initial = {"1"};
  std::istringstream in(text);
  std::string line;
  int separators = 0;
  while (std::getline(in, line)) {
    if (line == "---") {
      ++separators;
      continue;
    }
    if (separators < 2) continue;
    std::istringstream fields(line.substr(0, line.find('"')));
    std::string from, to;
    fields >> from >> to;
    const auto q = line.find('"');
    nfa.delta.insert({{from, line.substr(q + 1, line.rfind('"') - q - 1)}, to});
    nfa.accepting.insert(from);
    nfa.accepting.insert(to);
  }
  CHECK(nfa.delta.size() == 8);
  CHECK(a.state_count() == 5);  // each state has 2 of the 4 actions: a rejecting sink
  // States are named by their lines' values: "0 1" is b = "F", n = "2" (by hand).
  CHECK(a.states() == std::vector<std::string>{"<F,1>", "<F,2>", "<T,1>", "<T,2>", "sink"});
  CHECK(a.state_name(a.initial()) == "<F,1>");
  CHECK(a.letters() == std::vector<std::string>{"increase", "on", "decrease", "off"});
  check_language(a, nfa, 5);
  // By hand: 1 -increase-> 2 -on-> 4 -off-> 2 -decrease-> 1; state 1 has no "off".
  CHECK(accepts(a, {"increase", "on", "off", "decrease"}));
  CHECK_FALSE(accepts(a, {"off"}));

  CHECK(contains(
      test::load_error("p.fsm",
                       test::read_text(test::frontend_data("fsm/mcrl2_probabilistic_fan.fsm")),
                       "line 18")
          .problem(),
      "probability"));
  // tau is a silent step; a fourth section names the initial state.
  Automaton t = test::load_text("t.fsm", "---\n---\n1 2 \"tau\"\n2 3 \"a\"\n3 1 \"b\"\n---\n3\n");
  CHECK(accepts(t, {"b", "a", "b"}));  // 3 -b-> 1 -tau-> 2 -a-> 3 -b-> 1
  CHECK_FALSE(accepts(t, {"a"}));      // state 3 has no "a"
  // Values that would blur a name are quoted; equal vectors fall back to the numbers.
  CHECK(test::load_text("q.fsm", "x(2) L \"[1, 2]\" \"\"\n---\n0\n1\n---\n1 2 \"a\"\n").states() ==
        std::vector<std::string>{"<\"[1, 2]\">", "<\"\">", "sink"});
  CHECK(test::load_text("e.fsm", "x(2) B \"a\" \"b\"\n---\n0\n0\n---\n1 2 \"a\"\n").states() ==
        std::vector<std::string>{"1", "2", "sink"});
  CHECK(contains(test::load_error("s.fsm", "---\n\n---\n1 0 \"a\"\n", "line 4").problem(),
                 "'0' is not a state"));
  CHECK(contains(
      test::load_error("d.fsm", "x(2) B \"a\" \"b\"\n---\n2\n---\n1 1 \"a\"\n", "line 3").problem(),
      "below its domain's size"));
  CHECK(contains(test::load_error("n.fsm", "x(3) B \"a\"\n---\n---\n", "line 1").problem(),
                 "declares 3 values"));
  CHECK(contains(test::load_error("l.fsm", "---\n---\n1 2 a\n", "line 3").problem(),
                 "expected a transition"));
  CHECK(contains(test::load_error("r.fsm", "x(0) B\n---\n0\n---\n1 2 \"a\"\n", "line 5").problem(),
                 "'2' is not a state"));
}

TEST_CASE("mata VTF: an explicit NFA of mata's benchmarks; alternating sections refused") {
  const auto path = test::frontend_data("vtf/mata_nfa_anbn_n2.mata");
  const std::string text = test::read_text(path);
  CHECK(detect_format("noext", text) == "vtf");
  Automaton a = test::load_text("noext", text);
  CHECK(a.letters() == std::vector<std::string>{"0", "1"});
  // By hand: q0 -0-> q1 -0-> q2 -1-> q3 -1-> q4, q1 -1-> q4, final q4: {01, 0011}.
  std::vector<std::vector<LetterId>> words{{}};
  std::size_t accepted = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    std::string spelled;
    std::vector<std::string> named;
    for (LetterId l : words[w]) {
      spelled += a.letter_name(l);
      named.push_back(a.letter_name(l));
    }
    CAPTURE(spelled);
    const bool in = accepts(a, named);
    CHECK(in == (spelled == "01" || spelled == "0011"));
    accepted += in;
    if (words[w].size() < 6)
      for (LetterId l = 0; l < 2; ++l) {
        auto next = words[w];
        next.push_back(l);
        words.push_back(next);
      }
  }
  CHECK(accepted == 2);
  // @NFA-bits is read (vtf_bits_test.cpp); alternating automata are not.
  CHECK(contains(test::load_error("b.mata", "@AFA-bits\nq1 q2 & (a1 | q1)\n", "line 1").problem(),
                 "'@AFA-bits' section"));
  // "!q0 & !q1": every state but those; comments; errors.
  Automaton n =
      test::load_text("n.mata", "@NFA-explicit # one\n%Initial q0\n%Final !q0\nq0 a q1\nq1 a q2\n");
  CHECK(accepts(n, {"a"}));
  CHECK(accepts(n, {"a", "a"}));
  CHECK_FALSE(accepts(n, {}));
  CHECK(
      contains(test::load_error("t.mata", "@NFA-explicit\n%Initial q0\nq0 a\n", "line 3").problem(),
               "expected a transition"));
  CHECK(contains(
      test::load_error("u.mata", "@NFA-explicit\n%Initial q0\nq0 a q0\n@NFA-explicit\n", "line 4")
          .problem(),
      "a second automaton"));
  CHECK(contains(test::load_error("v.mata", "@NFA-explicit\n%Final q0\nq0 a q0\n").problem(),
                 "no initial state"));
  CHECK(
      contains(test::load_error("w.mata", "@NFA-explicit\n%Initial (q0 | q1)\nq0 a q0\n", "line 2")
                   .problem(),
               "a list of states"));
}

TEST_CASE("The input-format table: every name is a choice of --input-format, with its extension") {
  const auto names = input_format_names();
  for (const char* n :
       {"json", "dot", "jff", "hoa", "aut", "ba", "gff", "taf", "fsm", "vtf", "etf"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  CHECK(detect_format("x.ba", "") == "ba");
  CHECK(detect_format("x.GFF", "") == "gff");
  CHECK(detect_format("x.taf.gz", "") == "taf");
  CHECK(detect_format("x.mata", "") == "vtf");
  CHECK(detect_format("x.etf", "") == "etf");
  // JSON that only looks like a RABIT line stays JSON.
  CHECK(detect_format("x", "[\"a,b->c\"]") == "json");
  CHECK(contains(test::load_error("u", "hello", "line 1").problem(), "RABIT BA"));
}
