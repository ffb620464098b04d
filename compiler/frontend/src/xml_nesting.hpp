#pragma once
// Internal header. Boost.PropertyTree's XML reader (rapidxml) recurses once per nested
// element, so 20,000 nested elements overflow the stack. This scan counts element nesting
// before the text goes to it, skipping comments, CDATA, processing instructions, DOCTYPE
// and quoted attribute values, and names the line of the first element nested too deep.
#include <boost/property_tree/ptree.hpp>
#include <cstddef>
#include <optional>
#include <string>

#include "krc/automata/automaton_builder.hpp"

namespace krc::frontend {

// Elements nest at most this deep in a JFLAP file (README, "Input formats"); JFLAP 8's own
// files nest about 8 deep.
inline constexpr int kMaxXmlNesting = 100;

// The line of the first start tag nested deeper than `limit`, if any. Malformed markup is
// left for the XML parser to report.
std::optional<std::size_t> too_deep_element(const std::string& text, int limit = kMaxXmlNesting);

// The document of an XML description (JFLAP, GOAL), its nesting checked before the parser
// sees it. Fails through `b` at the line of the first element nested too deep ("... deep
// (krc's limit for LIMIT_OF)") or of the parser's complaint.
boost::property_tree::ptree read_xml_document(const std::string& text, const AutomatonBuilder& b,
                                              const std::string& limit_of);

}  // namespace krc::frontend
