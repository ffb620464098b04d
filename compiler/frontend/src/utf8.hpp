#pragma once
// Names end up in JSON (the weights file's metadata, --json output), and JSON holds only
// UTF-8 text. DOT and JFLAP files can carry any bytes, so the readers check every name here
// and refuse ill-formed ones with the place, instead of failing later inside a JSON writer.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace krc::frontend {

// Offset of the first byte that is not part of well-formed UTF-8 (Unicode's table 3-7: no
// overlong forms, no surrogates, nothing above U+10FFFF), or nullopt when all of `s` is.
std::optional<std::size_t> first_invalid_utf8(std::string_view s);

// `s` with every byte of an ill-formed sequence written as \xHH: printable in a message.
std::string escape_invalid_utf8(std::string_view s);

// `s` with every ill-formed byte replaced by U+FFFD: for names krc makes up itself (from a
// file name), where refusing the input would be unhelpful.
std::string replace_invalid_utf8(std::string_view s);

// The problem to report when a name read from a file is not UTF-8, e.g. "state name
// \"s\xFF\" is not valid UTF-8 (byte 2) ...", or nullopt when it is. `what`: "state name".
std::optional<std::string> invalid_utf8_problem(std::string_view name, std::string_view what);

}  // namespace krc::frontend
