// The DOT grammar check that runs before Boost's read_graphviz: on random statement soups,
// every syntax error krc reports has a line, which holds only if the check rejects whatever
// Boost rejects (Boost's own messages carry no position, and krc reports those without one).
#include <doctest/doctest.h>

#include <random>

#include "frontend_test_helpers.hpp"

using namespace krc;

namespace {

// Fragments of statements, valid and broken, in the dialects krc meets.
const std::vector<std::string> kFragments{"a -> b [label=\"x\"]",
                                          "a",
                                          "a [label=\"q\"]",
                                          "{a b}",
                                          "subgraph {a}",
                                          "subgraph s {a -> b}",
                                          "subgraph s",
                                          "node [shape=circle]",
                                          "edge [label=y]",
                                          "rankdir=LR",
                                          "a -> {b c}",
                                          "a:p -> b:q:n",
                                          "a -> b -> c [label=z]",
                                          "x [label=<a<br/>b>]",
                                          "a -> b [label=<c | d<br />e>]",
                                          "\"q r\" -> a [label=\"w\"]",
                                          "a [shape=circle label=\"s\"]",
                                          "a [x=1; y=2,]",
                                          "graph [pad=\"5\"]",
                                          "a -> b[label=u]",
                                          "{rank=same; a; b}",
                                          "a -> subgraph t {b}",
                                          "a@n -> b",
                                          "a:(1,2) -> b",
                                          "a:p@n -> b",
                                          "a -> b:s"};
const std::vector<std::string> kBroken{"->",
                                       "[",
                                       "]",
                                       "=",
                                       "a ->",
                                       "{",
                                       "}",
                                       "a [b=]",
                                       "subgraph",
                                       ",",
                                       "a -- b",
                                       "a [label=<x>",
                                       "\"open",
                                       "/* open",
                                       "a b c =",
                                       "node",
                                       "a -> -> b",
                                       "a :",
                                       "- -",
                                       "[label=x]",
                                       "a @",
                                       "subgraph {",
                                       "é -> a",
                                       "a [=x]",
                                       "a -> b [label=x] [",
                                       ".",
                                       "a ) b",
                                       "a:p:q:r",
                                       "a@n@m",
                                       "a:p:q -> b:(1,2"};

std::string random_dot(std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> fragment(0, kFragments.size() - 1);
  std::uniform_int_distribution<std::size_t> broken(0, kBroken.size() - 1);
  std::uniform_int_distribution<int> count(0, 6), coin(0, 9);
  std::string text = coin(rng) == 0 ? "strict digraph {\n" : "digraph g {\n";
  for (int i = count(rng); i > 0; --i)
    text += (coin(rng) < 2 ? kBroken[broken(rng)] : kFragments[fragment(rng)]) +
            (coin(rng) < 5 ? ";\n" : "\n");
  text += "__start0 -> a;\n";
  if (coin(rng) != 0) text += "}\n";
  if (coin(rng) == 0) text += "trailing\n";
  return text;
}

}  // namespace

TEST_CASE("dot: every syntax error on random statement soups has a line") {
  std::mt19937_64 rng(88);
  int errors = 0, other = 0;
  for (int i = 0; i < test::scaled(3000); ++i) {
    const std::string text = random_dot(rng);
    CAPTURE(text);
    try {
      test::TempDir dir;
      load_automaton(test::write_file(dir, "soup.dot", text));
      ++other;
    } catch (const InputError& e) {
      if (e.problem().find("not valid Graphviz DOT") == std::string::npos) {
        ++other;  // parsed, then judged as an automaton
        continue;
      }
      ++errors;
      CHECK(e.place().rfind("line ", 0) == 0);
    }
  }
  MESSAGE(errors << " syntax errors, " << other << " parsed");
  CHECK(errors > 0);
  CHECK(other > 0);
}
