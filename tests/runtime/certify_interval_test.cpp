// The certifier's sum bounds (runtime/src/certify/interval.hpp) on sums whose float32 value is
// known by hand: point terms on one grid add exactly in any order, so the bound must be that
// one number, a sum of 0 included (it was widened to the numbers around 0 by the outward
// nudges that bound inexact sums); a sum that float32 rounds must be bracketed, not pinned.
#include <doctest/doctest.h>

#include <cmath>

#include "certify/interval.hpp"

using krc::bounds::Accumulator;
using krc::bounds::Interval;

TEST_CASE("certify intervals: exact sums of point terms are their value, 0 included") {
  SUBCASE("a comb unit's increment cancelled by its bias: exactly 0") {
    Accumulator acc;
    acc.add(1.0, Interval::point(3.0));
    acc.add_constant(-3.0);
    REQUIRE(acc.exact());
    const Interval v = acc.result();
    CHECK(v.is_point());
    CHECK(v.lo == 0.0);
  }
  SUBCASE("halves, quarters and integers: 1.5 - 0.5 + 7 = 8") {
    Accumulator acc;
    acc.add(0.5, Interval::point(3.0));
    acc.add(0.25, Interval::point(-2.0));
    acc.add_constant(7.0);
    REQUIRE(acc.exact());
    const Interval v = acc.result();
    CHECK(v.is_point());
    CHECK(v.lo == 8.0);
  }
  SUBCASE("large terms that cancel to a small integer") {
    Accumulator acc;
    acc.add(1.0, Interval::point(4096.0));
    acc.add(-1.0, Interval::point(4095.0));
    acc.add(1.0, Interval::point(-1.0));
    REQUIRE(acc.exact());
    CHECK(acc.result().is_point());
    CHECK(acc.result().lo == 0.0);
  }
}

TEST_CASE("certify intervals: a sum float32 rounds is bracketed, never pinned") {
  // 2^24 + 1 is not a float32: the terms are on the grid 1 but pass 2^24 of it, so the sum is
  // not exact in every order, and the bound must hold both 2^24 and 2^24 + 2.
  Accumulator acc;
  acc.add(1.0, Interval::point(16777216.0));
  acc.add(1.0, Interval::point(1.0));
  acc.add(1.0, Interval::point(1.0));
  CHECK_FALSE(acc.exact());
  const Interval v = acc.result();
  CHECK(v.lo <= 16777216.0);
  CHECK(v.hi >= 16777218.0);
  // A term known only as a range keeps the sum a range.
  Accumulator ranged;
  ranged.add(1.0, Interval{0.5, 1.5});
  ranged.add_constant(2.0);
  CHECK_FALSE(ranged.exact());
  CHECK(ranged.result().lo <= 2.5);
  CHECK(ranged.result().hi >= 3.5);
}
