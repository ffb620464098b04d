#include "xml_nesting.hpp"

#include <algorithm>
#include <boost/property_tree/xml_parser.hpp>
#include <sstream>

#include "source_lines.hpp"

namespace krc::frontend {

std::optional<std::size_t> too_deep_element(const std::string& text, int limit) {
  std::size_t line = 1, i = 0;
  int depth = 0;
  // Moves i to just past `end` (or to the end of the text), counting lines.
  auto skip_past = [&](const char* end, std::size_t length) {
    std::size_t stop = text.find(end, i);
    stop = stop == std::string::npos ? text.size() : stop + length;
    line += static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(i),
                                                text.begin() + static_cast<std::ptrdiff_t>(stop),
                                                '\n'));
    i = stop;
  };
  while (i < text.size()) {
    if (text[i] != '<') {
      if (text[i] == '\n') ++line;
      ++i;
      continue;
    }
    if (text.compare(i, 4, "<!--") == 0) {
      skip_past("-->", 3);
    } else if (text.compare(i, 9, "<![CDATA[") == 0) {
      skip_past("]]>", 3);
    } else if (text.compare(i, 2, "<?") == 0) {
      skip_past("?>", 2);
    } else if (text.compare(i, 2, "<!") == 0) {  // DOCTYPE, maybe with an internal subset
      int brackets = 0;
      for (; i < text.size(); ++i) {
        if (text[i] == '\n') ++line;
        if (text[i] == '[') ++brackets;
        if (text[i] == ']') --brackets;
        if (text[i] == '>' && brackets <= 0) break;
      }
      ++i;
    } else if (text.compare(i, 2, "</") == 0) {
      --depth;
      skip_past(">", 1);
    } else {  // a start tag: to its '>', outside quoted attribute values
      const std::size_t tag_line = line;
      char quote = 0;
      std::size_t j = i + 1;
      for (; j < text.size(); ++j) {
        if (text[j] == '\n') ++line;
        if (quote) {
          if (text[j] == quote) quote = 0;
        } else if (text[j] == '"' || text[j] == '\'') {
          quote = text[j];
        } else if (text[j] == '>') {
          break;
        }
      }
      const bool empty_element = j < text.size() && text[j - 1] == '/';
      if (!empty_element && ++depth > limit) return tag_line;
      i = j + 1;
    }
  }
  return std::nullopt;
}

boost::property_tree::ptree read_xml_document(const std::string& text, const AutomatonBuilder& b,
                                              const std::string& limit_of) {
  namespace pt = boost::property_tree;
  // Before the XML parser, which recurses once per nesting level.
  if (auto line = too_deep_element(text))
    b.fail(line_place(*line), "elements nested more than " + std::to_string(kMaxXmlNesting) +
                                  " deep (krc's limit for " + limit_of + ")");
  pt::ptree document;
  try {
    std::istringstream in(text);
    pt::read_xml(in, document, pt::xml_parser::no_comments);
  } catch (const pt::xml_parser_error& e) {
    b.fail(line_place(e.line() == 0 ? 1 : e.line()), "not valid XML: " + e.message());
  }
  return document;
}

}  // namespace krc::frontend
