// The shared name table (krc/automata/name_table.hpp) and the shared count format
// (krc/automata/thousands.hpp).
#include "krc/automata/name_table.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "krc/automata/thousands.hpp"

namespace {
enum class Colour { Red, Green, Blue };
constexpr krc::NameTable<Colour> kColours{"colour", {"red", "green", "blue"}};
// Names ending in digits, as Arithmetic's Float16 does: the count must not take them for the
// compiler's spelling of an unnamed value, "(Width)2".
enum class Width { Bits8, Bits16, Bits32, Bits64, Bits128 };
// An enum whose numbering has a gap: the count ends at the first unnamed value.
enum class Gapped { Zero, One, Three = 3 };
enum class Single { Only };
}  // namespace

// The name tables' length checks compare against these counts (a table shorter than its enum
// does not compile, which a test cannot show; these show the count it is compared with).
static_assert(krc::enum_count<Colour> == 3);
static_assert(krc::enum_count<Width> == 5);
static_assert(krc::enum_count<Gapped> == 2);
static_assert(krc::enum_count<Single> == 1);

TEST_CASE("enum_count reads an enum's length from the enum itself") {
  CHECK(krc::enum_count<Colour> == 3);
  CHECK(krc::enum_count<Width> == 5);
  CHECK(krc::enum_count<Gapped> == 2);
  CHECK(krc::enum_count<Single> == 1);
}

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
