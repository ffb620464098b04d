// Aldebaran .aut files (tests/frontend/data/aut, sources in its SOURCES.md): read as the
// system's traces. The oracle is the file's own transition list, read here line by line (not
// through krc's reader) and run as a set of states, with the internal action as a silent step.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <sstream>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;

namespace {

struct Lts {
  std::string initial;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> delta;  // (q, label)
  std::map<std::string, std::set<std::string>> silent;
  std::vector<std::string> labels;  // in order of first appearance
};

// "des (i, t, n)" then "(from, label, to)": the label is what lies between the first and the
// last comma, quotes dropped.
Lts read_lts(const std::string& text) {
  Lts lts;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  lts.initial = line.substr(line.find('(') + 1, line.find(',') - line.find('(') - 1);
  while (std::getline(in, line)) {
    if (line.find('(') == std::string::npos) continue;
    const auto open = line.find('('), first = line.find(','), last = line.rfind(','),
               close = line.rfind(')');
    auto strip = [](std::string s) {
      while (!s.empty() && s.front() == ' ') s.erase(0, 1);
      while (!s.empty() && s.back() == ' ') s.pop_back();
      if (s.size() >= 2 && s.front() == '"') s = s.substr(1, s.size() - 2);
      return s;
    };
    const std::string from = strip(line.substr(open + 1, first - open - 1));
    const std::string label = strip(line.substr(first + 1, last - first - 1));
    const std::string to = strip(line.substr(last + 1, close - last - 1));
    if (label == "i" || label == "tau") {
      lts.silent[from].insert(to);
      continue;
    }
    if (std::find(lts.labels.begin(), lts.labels.end(), label) == lts.labels.end())
      lts.labels.push_back(label);
    lts.delta[{from, label}].insert(to);
  }
  return lts;
}

std::set<std::string> closure(const Lts& lts, std::set<std::string> s) {
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& q : std::set<std::string>(s))
      if (auto it = lts.silent.find(q); it != lts.silent.end())
        for (const auto& r : it->second) grew = s.insert(r).second || grew;
  }
  return s;
}

bool is_trace(const Lts& lts, const std::vector<std::string>& word) {
  std::set<std::string> s = closure(lts, {lts.initial});
  for (const auto& a : word) {
    std::set<std::string> next;
    for (const auto& q : s)
      if (auto it = lts.delta.find({q, a}); it != lts.delta.end())
        next.insert(it->second.begin(), it->second.end());
    s = closure(lts, next);
    if (s.empty()) return false;
  }
  return true;
}

void check_traces(const Automaton& a, const Lts& lts, std::size_t length) {
  CHECK(a.letters() == lts.labels);
  test::check_language_against(
      a, [&](const std::vector<std::string>& word) { return is_trace(lts, word); }, length, 40);
}

}  // namespace

TEST_CASE("Aldebaran: mCRL2's dining philosophers, read as its traces") {
  const auto path = test::frontend_data("aut/mcrl2_dining2.aut");
  LoadOptions options;
  options.completion.add_sink = true;  // state 3 deadlocks: no trace goes on from it
  Automaton a = load_automaton(path.string(), options);
  CHECK(a.state_count() == 11);  // 10 and the sink
  CHECK(a.letter_name(0) == "lock(p2, f2)");
  check_traces(a, read_lts(test::read_text(path)), 5);
}

TEST_CASE("Aldebaran: the internal action is a silent step; content sniffing; errors") {
  const std::string text =
      "des (0, 5, 4)\n(0, \"send\", 1)\n(1, i, 2)\n(1, tau, 3)\n(2, \"ack\", 0)\n(3, \"nack\", "
      "0)\n";
  Automaton a = test::load_text("noext", text);
  check_traces(a, read_lts(text), 7);
  LoadOptions strict;
  strict.completion.determinise = false;
  CHECK(contains(test::load_error("s.aut", text, "line 3", strict).problem(), "epsilon"));
  CHECK(contains(test::load_error("c.aut", "des (0, 2, 2)\n(0, \"a\", 1)\n", "line 2").problem(),
                 "announces 2 transitions, the file has 1"));
  CHECK(contains(test::load_error("r.aut", "des (0, 1, 2)\n(0, \"a\", 2)\n", "line 2").problem(),
                 "'2' is not a state"));
  CHECK(contains(
      test::load_error("p.aut", "des(0 1/3 1, 2, 2)\n(0,\"a\",0 1/2 1)\n(1,\"b\",1)\n", "line 1")
          .problem(),
      "probabilistic"));
  CHECK(contains(test::load_error("h.aut", "des 0 1 2\n", "line 1").problem(), "three numbers"));
  CHECK(contains(test::load_error("l.aut", "des (0, 1, 1)\n0 a 0\n", "line 2").problem(),
                 "expected a transition"));
}
