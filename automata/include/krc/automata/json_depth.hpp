#pragma once
// How deeply krc lets JSON nest, in descriptions, weights headers and their metadata. nlohmann
// parses without recursion, but copying, printing and comparing a document recurse once per
// level: a file nesting 100,000 deep would overflow the stack long after it was read. Every
// JSON text is therefore scanned before it is parsed, and deeper ones are refused as bad input.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace krc {

inline constexpr int kMaxJsonDepth = 512;

// The byte offset of the first '[' or '{' that opens level max_depth + 1, or nullopt. Brackets
// inside strings do not count. Malformed JSON is scanned as far as it goes (the parser then
// reports it); the scan is linear and uses no stack.
std::optional<std::size_t> json_too_deep(std::string_view text, int max_depth = kMaxJsonDepth);

// The problem to report at that offset: "nesting deeper than 512 levels".
std::string json_depth_problem(int max_depth = kMaxJsonDepth);

}  // namespace krc
