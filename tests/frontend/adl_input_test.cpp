// Stamina's ADL files (tests/frontend/data/adl, sources in its SOURCES.md). The oracle is the
// format's own semantics as Stamina's adl.rb documents it, read here from the file's text (not
// through krc's reader): the states' flags and the edges, run as a set of states; a word is
// accepted when a state reached is accepting and not an error state (Stamina's `accepts?`).
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;

namespace {

struct Adl {
  std::set<std::string> initial, accepting;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> delta;  // (q, symbol)
  std::vector<std::string> symbols;  // in order of first appearance
};

Adl read_adl(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::vector<std::string> row;
    for (std::string w; words >> w;) row.push_back(w);
    if (!row.empty()) rows.push_back(row);
  }
  Adl adl;
  const std::size_t states = std::stoul(rows.at(0).at(0));
  for (std::size_t i = 1; i <= states; ++i) {
    const auto& r = rows.at(i);
    if (r.at(1) == "true") adl.initial.insert(r[0]);
    if (r.at(2) == "true" && !(r.size() == 4 && r[3] == "true")) adl.accepting.insert(r[0]);
  }
  for (std::size_t i = states + 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    adl.delta[{r.at(0), r.at(2)}].insert(r.at(1));
    if (std::find(adl.symbols.begin(), adl.symbols.end(), r[2]) == adl.symbols.end())
      adl.symbols.push_back(r[2]);
  }
  return adl;
}

bool accepts(const Adl& adl, const std::vector<std::string>& word) {
  std::set<std::string> s = adl.initial;
  for (const auto& a : word) {
    std::set<std::string> next;
    for (const auto& q : s)
      if (auto it = adl.delta.find({q, a}); it != adl.delta.end())
        next.insert(it->second.begin(), it->second.end());
    s = next;
  }
  for (const auto& q : s)
    if (adl.accepting.count(q)) return true;
  return false;
}

std::string file_text(const std::string& name) {
  return test::read_text(test::frontend_data("adl/" + name));
}

void check_against_oracle(const Automaton& a, const std::string& text, std::size_t length) {
  const Adl adl = read_adl(text);
  CHECK(a.letters() == adl.symbols);
  test::check_language_against(
      a, [&](const std::vector<std::string>& word) { return accepts(adl, word); }, length, 40);
}

}  // namespace

TEST_CASE("ADL: Stamina's own files, read as Stamina reads them") {
  for (const std::string name : {"stamina_ref_automaton.adl", "stamina_randdfa.adl"}) {
    CAPTURE(name);
    const std::string text = file_text(name);
    std::vector<std::string> notes;
    LoadOptions options;
    options.completion.note = [&](const std::string& n) { notes.push_back(n); };
    const Automaton a = load_automaton(test::frontend_data("adl/" + name).string(), options);
    check_against_oracle(a, text, name == "stamina_randdfa.adl" ? 8 : 4);
    // Both are partial acceptors: completed with a rejecting sink, and said so.
    CHECK(a.find_state("sink") >= 0);
    REQUIRE(!notes.empty());
    CHECK(contains(notes.back(), "partial acceptor"));
    // By content too: without the extension (the reference file opens with '#' comments, which
    // would read as DOT's preprocessor lines).
    CHECK(test::load_text("noext", text).transitions() == a.transitions());
  }
  // The reference file's identifiers are kept: "identified_state" is a state's name.
  const Automaton ref = test::load_text("r.adl", file_text("stamina_ref_automaton.adl"));
  CHECK(ref.find_state("identified_state") >= 0);
  CHECK(ref.state_name(ref.initial()) == "0");
  // randdfa's initial state is the seventh declared, not the first.
  const Automaton rand = test::load_text("d.adl", file_text("stamina_randdfa.adl"));
  CHECK(rand.state_name(rand.initial()) == "6");
}

TEST_CASE("ADL: several initial states and nondeterminism are an NFA; error states reject") {
  const std::string text =
      "# an NFA: two initial states, two b-edges from p\n"
      "4 6\n"
      "p true false\n"
      "q true false   # also initial\n"
      "r false true\n"
      "e false true true\n"
      "p r a\n"
      "q q a\n"
      "q r b\n"
      "p q b\n"
      "p p b\n"
      "r e a\n";
  const Automaton a = test::load_text("n.adl", text);
  check_against_oracle(a, text, 6);
  // The error state accepts for its accepting flag but rejects for its error flag: "a a" from
  // p reaches e only.
  const Adl adl = read_adl(text);
  CHECK(!accepts(adl, {"a", "a"}));
  CHECK(accepts(adl, {"a"}));
}

TEST_CASE("ADL: malformed and hostile files name the line and the problem") {
  struct Case {
    std::string text, place, says;
  };
  const std::vector<Case> cases{
      {"# nothing\n\n", "", "comments only"},
      {"2\n0 true false\n", "line 1", "state_count edge_count"},
      {"2 x\n0 true false\n", "line 1", "state_count edge_count"},
      {"0 0\n", "line 1", "no states"},
      {"3 1\n0 true false\n", "line 1", "lines (one per state and edge"},
      {"2 1\n0 true false\n", "line 2", "announces 2 states, the file has 1"},
      {"4000000000 1\n0 true false\n", "line 1", "state_count edge_count"},
      {"100000000 0\n0 true false\n", "line 1", "lines"},
      {"2 0\n0 true false\n1 yes false\n", "line 3", "expected a state"},
      {"2 0\n0 true false\n1 false false true true\n", "line 3", "expected a state"},
      {"2 0\n0 true false\n0 false true\n", "line 3", "declared twice (first at line 2)"},
      {"1 1\n0 true false\n0 1 a\n", "line 3", "'1' is not a state"},
      {"1 1\n0 true false\n0 0\n", "line 3", "expected an edge"},
      {"1 1\n0 true false\n0 0 a b\n", "line 3", "expected an edge"},
      {"1 0\n0 true false\n0 0 a\n", "line 3", "data after the 0 edges"},
      {"1 2\n0 true false\n0 0 a\n\n\n", "line 5", "announces 2 edges, the file has 1"},
      {"2 0\n0 false false\n1 false true\n", "line 1", "no state is initial"},
      {"1 1\n0 true true\n0 0 \xff\n", "line 3", "UTF-8"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const InputError e = test::load_error("h.adl", c.text, c.place);
    CHECK(contains(e.problem(), c.says));
  }
  // --initial names the initial state of a file without one.
  LoadOptions initial;
  initial.completion.initial = "1";
  CHECK(test::load_text("i.adl", "2 0\n0 false false\n1 false true\n", initial).initial() == 1);
  // Asked for by name, the reader reads what the extension does not say.
  LoadOptions adl;
  adl.format = "adl";
  CHECK(test::load_text("x.txt", "1 1\n0 true true\n0 0 a\n", adl).state_count() == 1);
}
