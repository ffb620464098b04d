#pragma once
// Formats krc does not read, told by their content, so that such a file is refused by name
// ("this is a RABIT .ba file, which krc does not read (yet)") instead of with the parse error
// of the format it happens to resemble (a RABIT file's "[0]" looks like JSON, GOAL's XML like
// JFLAP's).
#include <optional>
#include <string>

namespace krc::frontend {

// What the text is ("RABIT's BA format (.ba)", ...), or nullopt when it is none of them.
std::optional<std::string> foreign_format(const std::string& text);

// "this is FORMAT, which krc does not read (yet); krc reads ...".
std::string foreign_format_problem(const std::string& format);

}  // namespace krc::frontend
