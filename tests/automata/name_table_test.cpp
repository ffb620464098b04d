// The shared name table (krc/name_table.hpp) and the shared count format (krc/thousands.hpp).
#include "krc/name_table.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "krc/thousands.hpp"

namespace {
enum class Colour { Red, Green, Blue };
constexpr krc::NameTable<Colour, 3> kColours{"colour", {"red", "green", "blue"}};
}  // namespace

TEST_CASE("a name table prints, parses and lists its names in enum order") {
  CHECK(std::string(kColours.name(Colour::Green)) == "green");
  CHECK(kColours.parse("blue") == Colour::Blue);
  CHECK(kColours.find("red") == Colour::Red);
  CHECK_FALSE(kColours.find("Red").has_value());  // names are exact, not case-folded
  CHECK(kColours.names() == std::vector<std::string>{"red", "green", "blue"});
  CHECK(kColours.choices() == "red, green or blue");
  // A value outside the enum (a corrupt cast) prints as "?" rather than reading past the table.
  CHECK(std::string(kColours.name(static_cast<Colour>(7))) == "?");
}

TEST_CASE("a name table's parse error names the set and every choice") {
  try {
    kColours.parse("purple");
    FAIL("parse accepted an unknown name");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "unknown colour 'purple' (red, green or blue)");
  }
}

TEST_CASE("with_thousands groups digits by three, sign first") {
  CHECK(krc::with_thousands(0) == "0");
  CHECK(krc::with_thousands(999) == "999");
  CHECK(krc::with_thousands(1000) == "1,000");
  CHECK(krc::with_thousands(1048576) == "1,048,576");
  CHECK(krc::with_thousands(-1234567) == "-1,234,567");
  CHECK(krc::with_thousands(LLONG_MIN) == "-9,223,372,036,854,775,808");
}
