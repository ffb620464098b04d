#pragma once
// Internal header. Boost.PropertyTree's XML reader (rapidxml) recurses once per nested
// element, so 20,000 nested elements overflow the stack. This scan counts element nesting
// before the text goes to it, skipping comments, CDATA, processing instructions, DOCTYPE
// and quoted attribute values, and names the line of the first element nested too deep.
#include <cstddef>
#include <optional>
#include <string>

namespace krc::frontend {

// Elements nest at most this deep in a JFLAP file (README, "Input formats"); JFLAP 8's own
// files nest about 8 deep.
inline constexpr int kMaxXmlNesting = 100;

// The line of the first start tag nested deeper than `limit`, if any. Malformed markup is
// left for the XML parser to report.
std::optional<std::size_t> too_deep_element(const std::string& text, int limit = kMaxXmlNesting);

}  // namespace krc::frontend
