// HOA files (tests/frontend/data/hoa, sources in its SOURCES.md): the format specification's
// own examples and files that ltl2dstar, ltl3tela (Spot's library) and Owl wrote, read for
// finite words. The oracle of each is its language written here from the file's definition
// (the formula it was made from, or its edges read by hand), as a predicate on the word's
// valuations, checked on every short word and on long random ones; never krc's own output.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "frontend_test_helpers.hpp"
#include "krc/automata/memory_budget.hpp"

using namespace krc;
using test::contains;

namespace {

using Word = std::vector<unsigned>;  // valuations: proposition j true when bit j is set
using Language = std::function<bool(const Word&)>;

bool has(unsigned v, unsigned j) { return (v >> j & 1) != 0; }

// The letter krc names a valuation by: its literals in proposition order.
std::string letter(unsigned v, const std::vector<std::string>& aps) {
  std::string name;
  for (std::size_t j = 0; j < aps.size(); ++j)
    name += (j ? "&" : "") + std::string(has(v, static_cast<unsigned>(j)) ? "" : "!") + aps[j];
  return aps.empty() ? "t" : name;
}

Automaton load_hoa(const std::string& name, bool complete = false) {
  LoadOptions options;
  options.completion.add_sink = complete;
  return load_automaton(test::frontend_data("hoa/" + name).string(), options);
}

bool accepts(const Automaton& a, const Word& word, const std::vector<std::string>& aps) {
  StateId q = a.initial();
  for (unsigned v : word) {
    const long l = a.find_letter(letter(v, aps));
    REQUIRE(l >= 0);
    q = a.step(q, static_cast<LetterId>(l));
  }
  return std::count(a.accepting().begin(), a.accepting().end(), q) > 0;
}

// Every word up to `length`, then 300 random words of length up to 60.
void check_language(const Automaton& a, const std::vector<std::string>& aps,
                    const Language& language, std::size_t length) {
  const unsigned letters = 1u << aps.size();
  REQUIRE(a.letter_count() == letters);
  for (unsigned v = 0; v < letters; ++v) CHECK(a.letter_name(v) == letter(v, aps));
  std::vector<Word> words{{}};
  for (std::size_t w = 0; w < words.size(); ++w) {
    CAPTURE(words[w]);
    CHECK(accepts(a, words[w], aps) == language(words[w]));
    if (words[w].size() < length)
      for (unsigned v = 0; v < letters; ++v) {
        Word next = words[w];
        next.push_back(v);
        words.push_back(std::move(next));
      }
  }
  std::mt19937 rng(34);
  for (int k = 0; k < 300; ++k) {
    Word word(std::uniform_int_distribution<std::size_t>(0, 60)(rng));
    for (auto& v : word) v = std::uniform_int_distribution<unsigned>(0, letters - 1)(rng);
    CAPTURE(word);
    CHECK(accepts(a, word, aps) == language(word));
  }
}

// a U b's automaton, then at least one more letter (spec_aut1's last edge must be the {1} loop).
bool until_then_more(const Word& w, bool more) {
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (has(w[i], 1)) return !more || w.size() > i + 1;
    if (!has(w[i], 0)) return false;
  }
  return false;
}

// aut7/aut8's branch through states 2 and 3: the letter after each must have a exactly when
// the one before had b.
bool follows_b_to_a(const Word& w) {
  for (std::size_t i = 1; i < w.size(); ++i)
    if (has(w[i], 0) != has(w[i - 1], 1)) return false;
  return true;
}

}  // namespace

TEST_CASE("HOA: the specification's examples read for finite words") {
  const std::vector<std::string> ab{"a", "b"};
  SUBCASE("aut1: transition-based Rabin, explicit labels: accepted after the {1} loop") {
    // Fin(0) & Inf(1): the last edge must be in set 1 and not 0, i.e. state 1's loop.
    check_language(
        load_hoa("spec_aut1.hoa", true), ab, [](const Word& w) { return until_then_more(w, true); },
        6);
  }
  SUBCASE("aut2: state-based Rabin, implicit labels: accepted in state 1") {
    Automaton a = load_hoa("spec_aut2.hoa");
    check_language(
        a, ab, [](const Word& w) { return until_then_more(w, false); }, 6);
    CHECK(a.state_name(a.initial()) == "0");  // state 1 has no name: numbers name them
  }
  SUBCASE("aut3: TGBA (implicit and explicit labels): the last letter is a&b") {
    const Language last_ab = [](const Word& w) { return !w.empty() && w.back() == 3; };
    check_language(load_hoa("spec_aut3.hoa"), ab, last_ab, 6);
    check_language(load_hoa("spec_aut3.2.hoa"), ab, last_ab, 6);
  }
  SUBCASE("aut4: aliases @a and @bc: the last letter has a, b and c") {
    check_language(
        load_hoa("spec_aut4.hoa"), {"a", "b", "c"},
        [](const Word& w) { return !w.empty() && w.back() == 7; }, 4);
  }
  SUBCASE("aut5: state labels and two initial states: every word") {
    // From {0, 1} every letter satisfies one of the two states' labels and leads to both.
    Automaton a = load_hoa("spec_aut5.hoa");
    check_language(
        a, {"a"}, [](const Word&) { return true; }, 8);
  }
  SUBCASE("aut6: transition-based Büchi: the letter before the last has a") {
    check_language(
        load_hoa("spec_aut6.hoa"), {"a"},
        [](const Word& w) { return w.size() >= 2 && has(w[w.size() - 2], 0); }, 8);
  }
  SUBCASE("aut7: state- and transition-based acceptance mixed") {
    check_language(
        load_hoa("spec_aut7.hoa"), ab,
        [](const Word& w) {
          return !w.empty() && ((w.size() >= 2 && has(w.back(), 0)) || follows_b_to_a(w));
        },
        6);
  }
  SUBCASE("aut8: the same with the state marks moved onto the edges") {
    check_language(
        load_hoa("spec_aut8.hoa"), ab,
        [](const Word& w) { return w.size() >= 2 && (has(w.back(), 0) || follows_b_to_a(w)); }, 6);
  }
}

TEST_CASE("HOA: files written by ltl2dstar, ltl3tela and Spot, and Owl") {
  const std::vector<std::string> p{"p0", "p1"};
  SUBCASE("ltl2dstar F(p0 & X p1), implicit labels: the prefix has p0 then p1") {
    Automaton a = load_hoa("ltl2dstar_Fandp0Xp1.hoa");
    CHECK(a.name() == "F & p0 X p1");
    check_language(
        a, p,
        [](const Word& w) {
          for (std::size_t i = 0; i + 1 < w.size(); ++i)
            if (has(w[i], 0) && has(w[i + 1], 1)) return true;
          return false;
        },
        7);
  }
  SUBCASE("ltl2dstar (X p0) U p1: p1 at j, p0 at every position 1..j") {
    check_language(
        load_hoa("ltl2dstar_UXp0p1.hoa"), p,
        [](const Word& w) {
          for (std::size_t j = 0; j < w.size(); ++j) {
            if (has(w[j], 1)) return true;
            if (j + 1 < w.size() && !has(w[j + 1], 0)) return false;
          }
          return false;
        },
        7);
  }
  SUBCASE("ltl3tela: Emerson-Lei acceptance, overlapping guards: the last letter has a") {
    // Only the edges in {3} and {2 3} satisfy (Inf(2) | Fin(1)) & Fin(0) & Inf(3); both read
    // a, and state 0, whose guards cover every letter and loop, is always among the states.
    check_language(
        load_hoa("tela_out_230.hoa"), {"a", "b", "c", "d"},
        [](const Word& w) { return !w.empty() && has(w.back(), 0); }, 3);
  }
  SUBCASE("Spot ltl2tgba | autfilt --sbacc, GFa & GFb: empty, or the last letter is a&b") {
    // Inf(0)&Inf(1) state-based: only state 0 is in both sets, and every a&b edge enters it.
    check_language(
        load_hoa("spot_sbacc_GFaGFb.hoa"), {"a", "b"},
        [](const Word& w) { return w.empty() || w.back() == 3; }, 6);
  }
  SUBCASE("Spot autfilt --state-based-acceptance, Streett: a^n with n mod 3 in {0, 2}") {
    // Fin(0) | Inf(1): state 0 {1} and state 2 {0 1} accept, state 1 {0} does not; a cycle.
    check_language(
        load_hoa("spot_sbacc_streett.hoa", true), {"a"},
        [](const Word& w) {
          return std::all_of(w.begin(), w.end(), [](unsigned v) { return v == 1; }) &&
                 w.size() % 3 != 1;
        },
        9);
  }
  SUBCASE("Owl ltl2dra F(a & G b): a, then b up to the end") {
    check_language(
        load_hoa("owl_ltl2dra_FaGb.hoa"), {"a", "b"},
        [](const Word& w) {
          for (std::size_t i = 0; i < w.size(); ++i)
            if (has(w[i], 0) && std::all_of(w.begin() + static_cast<std::ptrdiff_t>(i), w.end(),
                                            [](unsigned v) { return has(v, 1); }))
              return true;
          return false;
        },
        6);
  }
}

TEST_CASE("HOA: recognised by content, several initial states, the alphabet") {
  const std::string text =
      "HOA: v1 States: 2 Start: 0 Start: 1 AP: 1 \"x y\" Acceptance: 1 Inf(0)\n"
      "--BODY-- State: 0 [0] 0 State: 1 {0} [!0] 1 --END--\n";
  Automaton a = test::load_text("noext", text);
  CHECK(a.letters() == std::vector<std::string>{"!\"x y\"", "\"x y\""});
  CHECK(a.state_name(a.initial()) == "{0,1}");
  LoadOptions strict;
  strict.completion.determinise = false;
  CHECK(contains(test::load_error("two.hoa", text, "line 1", strict).problem(),
                 "a second initial state '1'"));
  // No propositions: one letter, "t".
  Automaton t = test::load_text(
      "t.hoa", "HOA: v1 Start: 0 AP: 0 Acceptance: 0 t --BODY-- State: 0 [t] 0 --END--");
  CHECK(t.letters() == std::vector<std::string>{"t"});
  CHECK(t.accepting().size() == 1);
}

TEST_CASE("HOA: what krc refuses, with the reason and the line") {
  const std::string head = "HOA: v1\nStates: 2\nStart: 0\nAP: 1 \"a\"\nAcceptance: 1 Inf(0)\n";
  CHECK(contains(test::load_error("spec_aut11.hoa",
                                  "HOA: v1\nStates: 4\nStart: 0&2\nAcceptance: 1 Fin(0)\n"
                                  "--BODY--\n--END--\n",
                                  "line 3")
                     .problem(),
                 "universal branching"));
  CHECK(
      contains(test::load_error("e.hoa", head + "--BODY--\nState: 0\n[0] 0&1\n--END--\n", "line 8")
                   .problem(),
               "universal branching"));
  CHECK(contains(
      test::load_error("ab.hoa", head + "--BODY--\nState: 0\n--ABORT--\n", "line 8").problem(),
      "--ABORT--"));
  CHECK(
      contains(test::load_error(
                   "two.hoa", head + "--BODY--\n--END--\n" + head + "--BODY--\n--END--\n", "line 8")
                   .problem(),
               "a second automaton"));
  CHECK(contains(
      test::load_error("ap.hoa", "HOA: v1\nAP: 13 \"a\"\nAcceptance: 0 t\n--BODY--\n--END--\n",
                       "line 2")
          .problem(),
      "at most 12"));
  CHECK(contains(
      test::load_error("alias.hoa", head + "Alias: @x @y\n--BODY--\nState: 0 [@x] 0\n--END--\n",
                       "line 6")
          .problem(),
      "@y is not defined"));
  CHECK(contains(
      test::load_error("implicit.hoa", head + "--BODY--\nState: 0\n0 1 1\n--END--\n", "line 7")
          .problem(),
      "exactly 2^AP = 2"));
  CHECK(contains(
      test::load_error("mixed.hoa", head + "--BODY--\nState: 0\n[0] 0\n1\n--END--\n", "line 9")
          .problem(),
      "without a label"));
  CHECK(contains(
      test::load_error("range.hoa", head + "--BODY--\nState: 0\n[0] 2\n--END--\n", "line 8")
          .problem(),
      "target state 2"));
  CHECK(contains(
      test::load_error("set.hoa", head + "--BODY--\nState: 0 {1}\n--END--\n", "line 7").problem(),
      "acceptance set 1"));
  CHECK(contains(test::load_error("start.hoa",
                                  "HOA: v1\nAcceptance: 0 t\n--BODY--\nState: 0\n"
                                  "--END--\n")
                     .problem(),
                 "no 'Start:'"));
  CHECK(contains(
      test::load_error("comment.hoa", "HOA: v1 /* /* */\nAcceptance: 0 t\n", "line 1").problem(),
      "never ends"));
  CHECK(contains(test::load_error("big.hoa", "HOA: v1\nStates: 99999999999\n", "line 2").problem(),
                 "below 2^31"));
  CHECK(contains(test::load_error("ver.hoa", "HOA: v2\n", "line 1").problem(), "version 1"));
  CHECK(contains(test::load_error("dup.hoa", "HOA: v1\nAP: 0\nAP: 0\n", "line 3").problem(),
                 "a second 'AP:'"));
  // A tool's own header items may repeat; upper-case unknown ones are noted, not refused.
  std::vector<std::string> notes;
  LoadOptions noting;
  noting.completion.note = [&](const std::string& note) { notes.push_back(note); };
  test::load_text("own.hoa",
                  "HOA: v1\nspot.highlight.edges: 1 2\nspot.highlight.edges: 3 4\nFoo: 1\n"
                  "Start: 0\nAcceptance: 0 t\n--BODY--\nState: 0 [t] 0\n--END--\n",
                  noting);
  CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return contains(n, "'Foo:' is not one krc knows");
  }));
}

TEST_CASE("HOA: nesting is bounded before it can exhaust the stack") {
  const std::string head = "HOA: v1\nStart: 0\nAP: 1 \"a\"\nAcceptance: 1 Inf(0)\n--BODY--\n";
  std::string deep(101, '(');
  CHECK(contains(
      test::load_error("deep.hoa",
                       head + "State: 0 [" + deep + "0" + std::string(101, ')') + "] 0\n--END--\n",
                       "line 6")
          .problem(),
      "nested more than 100"));
  CHECK(
      contains(test::load_error("bang.hoa",
                                head + "State: 0 [" + std::string(200000, '!') + "0] 0\n", "line 6")
                   .problem(),
               "nested more than 100"));
  CHECK(contains(
      test::load_error("acc.hoa", "HOA: v1\nAcceptance: 1 " + std::string(5000, '(') + "Inf(0)\n",
                       "line 2")
          .problem(),
      "nested more than 100"));
  // Long flat chains are not nesting: 20,000 conjuncts read.
  std::string chain = "Inf(0)";
  for (int i = 0; i < 20000; ++i) chain += " & Inf(0)";
  Automaton a = test::load_text("chain.hoa", "HOA: v1\nStart: 0\nAcceptance: 1 " + chain +
                                                 "\n--BODY--\nState: 0 {0}\n" + "[t] 0\n--END--\n");
  CHECK(a.accepting().size() == 1);
  // Comments nest to any depth without recursion.
  std::string comment;
  for (int i = 0; i < 100000; ++i) comment += "/*";
  for (int i = 0; i < 100000; ++i) comment += "*/";
  Automaton c = test::load_text("comments.hoa", "HOA: v1 " + comment +
                                                    " Start: 0 Acceptance: 0 t --BODY-- State: 0 "
                                                    "[t] 0 --END--\n");
  CHECK(c.state_count() == 1);
}

TEST_CASE("HOA: a declared size is counted against the memory budget before it is allocated") {
  // 2,000,000 states of 4,096 letters each: a 30 GiB table from a 100-byte file.
  const std::string text =
      "HOA: v1\nStates: 2000000\nStart: 0\nAP: 12 \"a\" \"b\" \"c\" \"d\" \"e\" \"f\" \"g\" \"h\" "
      "\"i\" \"j\" \"k\" \"l\"\nAcceptance: 0 t\n--BODY--\n--END--\n";
  const std::uint64_t budget = memory_budget();
  set_memory_budget(std::uint64_t{1} << 30);
  test::TempDir dir;
  const std::string path = test::write_file(dir, "big.hoa", text);
  LoadOptions options;
  options.completion.add_sink = true;
  CHECK_THROWS_AS(load_automaton(path, options), LimitError);
  set_memory_budget(budget);
}
