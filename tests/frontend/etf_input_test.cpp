// LTSmin's ETF (tests/frontend/data/etf, sources in its SOURCES.md). The oracles: the etf(5)
// man page's drawing of its example's LTS; LTSmin's own test suite's state and transition
// counts for gear.1.etf; and, for languages, a simulation written here that reads the trans
// sections with a few lines of string splitting and runs a word on the set of state vectors
// it can reach (no exploration, no state numbering, not krc's parser).
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <sstream>

#include "frontend_test_helpers.hpp"
#include "krc/frontend/etf_reader.hpp"

using namespace krc;
using test::contains;

namespace {

// The oracle: the trans sections as rows of fields ("*", "3/4", then the labels), the
// initial vector, and the values of the sort "action" (the man page's); each non-empty section
// is a group, its letter "groupG" when there are no edge labels, else the row's action.
struct Simulation {
  std::vector<long> initial;
  std::vector<std::vector<std::vector<std::string>>> groups;
  std::vector<std::string> actions;
  bool labelled = false;

  explicit Simulation(const std::string& text) {
    std::istringstream in(text);
    std::string line, section;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string x; words >> x;) w.push_back(x);
      if (w.empty()) continue;
      if (w[0] == "begin") {
        section = w[1] + (w.size() > 2 ? " " + w[2] : "");
        if (w[1] == "trans") groups.emplace_back();
        continue;
      }
      if (w[0] == "end") continue;
      if (section == "edge") labelled = true;
      if (section == "init")
        for (const auto& x : w) initial.push_back(std::stol(x));
      if (section == "trans") groups.back().push_back(w);
      if (section == "sort action") actions.push_back(line.substr(1, line.rfind('"') - 1));
    }
    std::erase_if(groups, [](const auto& g) { return g.empty(); });
  }

  std::string letter(std::size_t g, const std::vector<std::string>& row) const {
    return labelled ? actions.at(std::stoul(row.back())) : "group" + std::to_string(g);
  }

  std::set<std::vector<long>> step(const std::set<std::vector<long>>& from,
                                   const std::string& a) const {
    std::set<std::vector<long>> next;
    for (const auto& s : from)
      for (std::size_t g = 0; g < groups.size(); ++g)
        for (const auto& row : groups[g]) {
          if (letter(g, row) != a) continue;
          std::vector<long> t = s;
          bool applies = true;
          for (std::size_t i = 0; i < s.size() && applies; ++i) {
            if (row[i] == "*") continue;
            const auto slash = row[i].find('/');
            applies = std::stol(row[i].substr(0, slash)) == s[i];
            t[i] = std::stol(row[i].substr(slash + 1));
          }
          if (applies) next.insert(t);
        }
    return next;
  }

  // Every state accepts: a word is in the language when some run reads it whole.
  bool accepts(const std::vector<std::string>& word) const {
    std::set<std::vector<long>> s{initial};
    for (const auto& a : word) s = step(s, a);
    return !s.empty();
  }
};

bool accepts(const Automaton& a, const std::vector<std::string>& word) {
  std::vector<LetterId> ids;
  for (const auto& w : word) ids.push_back(static_cast<LetterId>(a.find_letter(w)));
  const StateId end = a.run(ids).back();
  return std::find(a.accepting().begin(), a.accepting().end(), end) != a.accepting().end();
}

// The oracle's language on every word up to `length`, 200 random words, and 100 random walks
// of the oracle (words it accepts, each with one more random letter).
void check_against(const Automaton& a, const Simulation& sim, std::size_t length) {
  test::check_language_against(
      a, [&](const std::vector<std::string>& w) { return sim.accepts(w); }, length, 20);
  std::mt19937 rng(34);
  for (int k = 0; k < 100; ++k) {
    std::vector<std::string> word;
    std::set<std::vector<long>> s{sim.initial};
    for (int i = 0; i < 40; ++i) {
      const std::string l = a.letter_name(std::uniform_int_distribution<LetterId>(
          0, static_cast<LetterId>(a.letter_count() - 1))(rng));
      word.push_back(l);
      CAPTURE(word);
      s = sim.step(s, l);
      CHECK(accepts(a, word) == !s.empty());
      if (s.empty()) break;
    }
  }
}

const std::string kHead = "begin state\nx:s y:_\nend state\nbegin edge\naction:action\nend edge\n";

}  // namespace

TEST_CASE("ETF: the etf(5) man page's example is the LTS it draws") {
  const auto path = test::frontend_data("etf/ltsmin_manpage_example.etf");
  const std::string text = test::read_text(path);
  CHECK(detect_format("noext", text) == "etf");
  const Automaton a = test::load_text("noext", text);
  // The page's drawing: 00 -a-> 01, 00 -b-> 10, 01 -b-> 11, 10 -a-> 11; every state a trace's
  // end. The shape map names slot 0's values (0 "square", 1 "circle"), the sort multiplicity
  // slot 1's (0 "single", 1 "double").
  const EtfSystem s = read_etf_system(text, "m.etf");
  CHECK(std::set<std::string>(s.states.begin(), s.states.end()) ==
        std::set<std::string>{"<square,single>", "<square,double>", "<circle,single>",
                              "<circle,double>"});
  CHECK(s.states[0] == "<square,single>");
  CHECK(s.letters_from == "action");
  CHECK(s.edges.size() == 4);
  CHECK(a.letters() == std::vector<std::string>{"b", "a"});
  for (const auto& c :
       std::vector<std::pair<std::vector<std::string>, bool>>{{{}, true},
                                                              {{"a", "b"}, true},
                                                              {{"b", "a"}, true},
                                                              {{"a", "a"}, false},
                                                              {{"b", "b"}, false},
                                                              {{"a", "b", "a"}, false}}) {
    const std::vector<std::string>& word = c.first;  // a plain name: CAPTURE takes it
    CAPTURE(word);
    CHECK(accepts(a, word) == c.second);
  }
  check_against(a, Simulation(text), 4);
}

TEST_CASE("ETF: LTSmin's gear.1.etf has the states and transitions LTSmin's tests expect") {
  const auto path = test::frontend_data("etf/ltsmin_gear.1.etf");
  const std::string text = test::read_text(path);
  const EtfSystem s = read_etf_system(text, path.string());
  // testsuite/check-ETF/test1.exp: "2689 states 3567 transitions" (etf2lts-seq, -mc, -dist).
  CHECK(s.states.size() == 2689);
  CHECK(s.edges.size() == 3567);
  CHECK(s.letters_from.empty());  // no edge labels: the groups are the letters
  CHECK(s.states[0] == "<255,255,255,255,0,0,closed,neutral,initial,gear,gear,0,q>");
  std::vector<std::string> notes;
  LoadOptions options;
  options.completion.note = [&](const std::string& n) { notes.push_back(n); };
  const Automaton a = load_automaton(path.string(), options);
  CHECK(a.name() == "ltsmin_gear.1");
  // 50 trans sections, one of them empty: 49 groups, the letters those that ever fire.
  for (const std::string& l : a.letters()) {
    CHECK(l.rfind("group", 0) == 0);
    CHECK(std::stoi(l.substr(5)) < 49);
  }
  CHECK(std::any_of(notes.begin(), notes.end(),
                    [](const std::string& n) { return contains(n, "transition groups"); }));
  check_against(a, Simulation(text), 2);
}

TEST_CASE("ETF: several edge labels, inline values, tau, comments") {
  // Two labels: the one whose sort begins with "action" spells the letters, a note says so.
  std::vector<std::string> notes;
  LoadOptions options;
  options.completion.note = [&](const std::string& n) { notes.push_back(n); };
  const std::string ok =
      "begin state\nx:s\nend state\nbegin edge\nprio:int act:action_sort\nend edge\n"
      "begin init\n0\nend init\nbegin trans\n0/1 7 \"go\"\n1/0 9 \"tau\"\n1/2 9 \"stop\"\n"
      "end trans\nbegin sort s\n\"idle\"\n\"busy\"\n\"done\"\nend sort\n";
  const Automaton a = test::load_text("ok.etf", ok, options);
  // By hand: idle -go-> busy -tau-> idle, busy -stop-> done: go (go)* ... with tau silent.
  CHECK(a.letters() == std::vector<std::string>{"go", "stop"});
  CHECK(accepts(a, {"go", "go", "stop"}));
  CHECK_FALSE(accepts(a, {"stop"}));
  CHECK_FALSE(accepts(a, {"go", "stop", "go"}));
  CHECK(std::any_of(notes.begin(), notes.end(),
                    [](const std::string& n) { return contains(n, "edge label 'act'"); }));
  CHECK(std::any_of(notes.begin(), notes.end(),
                    [](const std::string& n) { return contains(n, "epsilon"); }));
}

TEST_CASE("ETF: --etf-label names the edge label that spells the letters") {
  const std::string two =
      "begin state\nx:s\nend state\nbegin edge\nprio:int act:action_sort\nend edge\n"
      "begin init\n0\nend init\nbegin trans\n0/1 7 \"go\"\n1/2 9 \"stop\"\nend trans\n"
      "begin sort s\n\"idle\"\n\"busy\"\n\"done\"\nend sort\n";
  LoadOptions prio;
  prio.etf_label = "prio";
  std::vector<std::string> notes;
  prio.completion.note = [&](const std::string& n) { notes.push_back(n); };
  // By hand: idle -7-> busy -9-> done, the numbers of 'prio' (sort int lists no values).
  const Automaton a = test::load_text("two.etf", two, prio);
  CHECK(a.letters() == std::vector<std::string>{"7", "9"});
  CHECK(accepts(a, {"7", "9"}));
  CHECK_FALSE(accepts(a, {"9"}));
  // Named, the choice is not announced as krc's.
  CHECK(std::none_of(notes.begin(), notes.end(),
                     [](const std::string& n) { return contains(n, "edge label"); }));
  LoadOptions act;
  act.etf_label = "act";
  CHECK(test::load_text("two.etf", two, act).letters() == std::vector<std::string>{"go", "stop"});
  // A name the file does not have: the error is at the edge section and lists the labels.
  LoadOptions wrong;
  wrong.etf_label = "action";
  const InputError e = test::load_error("two.etf", two, "line 4", wrong);
  CHECK(contains(e.problem(), "no edge label 'action'"));
  CHECK(contains(e.problem(), "'prio', 'act'"));
  // A file without edge labels says so; a file of another format refuses the option.
  const std::string none =
      "begin state\nx:int\nend state\nbegin edge\nend edge\nbegin init\n0\nend init\n";
  CHECK(contains(test::load_error("none.etf", none, "line 4", wrong).problem(), "no edge labels"));
  CHECK(contains(test::load_error("m.dot", "digraph g { a -> b [label=x]; }", "", wrong).problem(),
                 "this file is read as dot"));
}

TEST_CASE("ETF: hostile and malformed files are refused with the line and the problem") {
  struct Case {
    std::string text, place, says;
  };
  const std::string init = "begin init\n0 0\nend init\n";
  const std::vector<Case> cases{
      {"begin edge\nend edge\n", "line 1", "'begin state'"},
      {"begin state\nend state\nbegin edge\nend edge\n", "line 1", "no slots"},
      {kHead + "begin init\n0\n", "line 8", "ends inside the 'begin init' section of line 7"},
      {kHead + init + "begin trans\n0/1 * 0\n", "line 11", "ends inside the 'begin trans'"},
      {kHead + "begin init\n0\nend init\n", "line 7", "1 values for 2 slots"},
      {kHead + "begin init\n0 0 0\nend init\n", "line 8", "more values than the 2 slots"},
      {kHead + init + init, "line 10", "a second init section"},
      {kHead, "line 6", "no init section"},
      {kHead + init + "begin trans\n0/1 *\nend trans\n", "line 11", "1 edge label values"},
      {kHead + init + "begin trans\n0/1 0/1 0\n* 0/1 0\nend trans\n", "line 12", "inconsistent"},
      {kHead + init + "begin trans\n0/ * 0\nend trans\n", "line 11", "'*' or 'from/to'"},
      {kHead + init + "begin trans\n0/99999999999 * 0\nend trans\n", "line 11", "too large"},
      {kHead + init + "begin trans\n0/1 * 5\nend trans\nbegin sort action\n\"a\"\nend sort\n",
       "line 11", "out of range"},
      {kHead + "begin init\n3 0\nend init\nbegin sort s\n\"p\"\n\"q\"\nend sort\n", "line 7",
       "the value 3 of slot 1 is out of range: its sort 's' has 2 values"},
      {kHead + "begin init\n0 \"v\"\nend init\n", "line 8", "without a sort"},
      {kHead + init + "begin trans\n0/1 * \"a\n", "line 11", "never closed"},
      {kHead + init + "begin trans\n0/1 * #6\nend trans\n", "line 11", "hexadecimal"},
      {kHead + init + "begin trans\n0/1 * \"\\n\"\nend trans\n", "line 11", "unknown escape"},
      {kHead + init + "begin trans\nbegin trans\n", "line 11", "do not nest"},
      {kHead + init + "begin trans\n0/1 * 0\nend init\n", "line 12", "expected 'end trans'"},
      {kHead + init + "begin sort action\n\"a\"\n\"a\"\nend sort\n", "line 12", "twice"},
      {kHead + init + "begin sort action\n\"a\"\nend sort\nbegin sort action\n\"b\"\nend sort\n",
       "line 13", "already has values"},
      {kHead + init + "begin map m:s\n0 \"x\"\nend map\n", "line 11", "2 slots"},
      {kHead + init + "begin frob\nend frob\n", "line 10", "unknown section"},
      {kHead + init + "begin trans\n0/1 * 0 ?\nend trans\n", "line 11", "unexpected character"},
      {"begin state\nx s\nend state\n", "line 2", "'name:sort'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text.substr(0, 200));
    const std::string problem = test::load_error("h.etf", c.text, c.place).problem();
    CAPTURE(problem);
    CHECK(contains(problem, c.says));
  }
  // More slots than krc reads, and a state space past the bound (2^11 vectors of 11 bits).
  std::string wide = "begin state\n";
  for (std::size_t i = 0; i <= kMaxEtfSlots; ++i) wide += "x" + std::to_string(i) + ":s ";
  CHECK(contains(test::load_error("w.etf", wide + "\nend state\n", "line 2").problem(),
                 "slots in the state vector"));
  std::string bits = "begin state\n", start, trans;
  for (int i = 0; i < 11; ++i) {
    bits += "b" + std::to_string(i) + ":bit ";
    start += "0 ";
    trans += "begin trans\n";
    for (int j = 0; j < 11; ++j) trans += j == i ? "0/1 " : "* ";
    trans += "\nend trans\n";
  }
  bits += "\nend state\nbegin edge\nend edge\nbegin init\n" + start + "\nend init\n" + trans;
  CHECK(read_etf_system(bits, "b.etf").states.size() == 2048);
  // A section is a set of rows: a row written twice is one transition (LTSmin's TreeFold).
  CHECK(read_etf_system(kHead + init + "begin trans\n0/1 * 0\n0/1 * 0\nend trans\n", "d.etf")
            .edges.size() == 1);
  CHECK_THROWS_WITH_AS(read_etf_system(bits, "b.etf", 1000),
                       doctest::Contains("more than 1000 states are reachable"), InputError);
}
