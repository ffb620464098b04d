// mata's @NFA-bits sections (tests/frontend/data/vtf, SOURCES.md): each valuation of the bit
// variables is a letter, named as HOA's valuations are ("x&!y&z", variables in order of first
// appearance; "t" without variables), and a guard is one transition per valuation satisfying
// it. The expectations are computed here from the formulas, not by krc's guard parser.
#include <doctest/doctest.h>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;

namespace {

using test::accepts;

std::string valuation(bool x, bool y, bool z) {
  return std::string(x ? "x" : "!x") + (y ? "&y" : "&!y") + (z ? "&z" : "&!z");
}

}  // namespace

TEST_CASE("mata @NFA-bits: mata's aut1, a chain of \\true guards") {
  const auto path = test::frontend_data("vtf/mata_bits_aut1.mata");
  const Automaton a = load_automaton(path.string());
  // No bit variable: one valuation, one letter. By hand: q8 -> q3 -> q1 -> q6 -> q4 -> q5 ->
  // q2 -> q9 -> q0 -> q7 on \true, and q7's guard is \false; %Final names every state but q7
  // negated, so the language is the one word of 9 letters.
  REQUIRE(a.letters() == std::vector<std::string>{"t"});
  for (std::size_t n = 0; n <= 14; ++n) {
    CAPTURE(n);
    CHECK(accepts(a, std::vector<std::string>(n, "t")) == (n == 9));
  }
}

TEST_CASE("mata @NFA-bits: guards over three variables, every valuation") {
  const Automaton a = test::load_text(
      "g.mata",
      "@NFA-bits\n%Initial q\n%Final r\nq (x & y) | z r\nr x&!y q\nr \\false \\true\n"
      "q !(x | y | z) q\n");
  REQUIRE(a.letter_count() == 8);
  for (int v = 0; v < 8; ++v) {
    const bool x = v & 1, y = v & 2, z = v & 4;
    const std::string letter = valuation(x, y, z);
    CAPTURE(letter);
    // One letter from q: accepted iff (x & y) | z (q's other guard loops on !x&!y&!z).
    CHECK(accepts(a, {letter}) == ((x && y) || z));
    // Two letters: into r, then r -> q on x & !y (not accepting), or nothing.
    CHECK_FALSE(accepts(a, {valuation(true, true, false), letter}));
    // Three: x&y into r, this letter back to q when x & !y, then z into r again.
    CHECK(accepts(a, {valuation(true, true, false), letter, valuation(false, false, true)}) ==
          (x && !y));
  }
}

TEST_CASE("mata @NFA-bits: what is refused, where") {
  CHECK(contains(test::load_error("a.mata", "@NFA-bits\n%Initial q\nq x & r\n", "line 3").problem(),
                 "is not a guard krc reads"));
  CHECK(contains(
      test::load_error("b.mata", "@NFA-bits\n%Initial q\nq x \\true\n", "line 3").problem(),
      "is a formula"));
  CHECK(contains(test::load_error("c.mata", "@NFA-bits\n%Initial q\nq\n", "line 3").problem(),
                 "expected a transition 'source guard target'"));
  std::string many = "@NFA-bits\n%Initial q\nq ";
  for (int k = 0; k < 13; ++k) many += (k ? " & v" : "v") + std::to_string(k);
  CHECK(contains(test::load_error("d.mata", many + " q\n", "line 3").problem(),
                 "more than 12 atomic propositions"));
}
