#pragma once
// Positions in a description file, for messages: "line L" and "line L, column C" (1-based).
#include <algorithm>
#include <cstddef>
#include <string>

namespace krc::frontend {

// The line holding byte `offset` (offsets past the end count as the last line).
inline std::size_t line_of(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<std::size_t>(std::count(
                 text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

inline std::size_t column_of(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line_start = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  return line_start == std::string::npos ? offset + 1 : offset - line_start;
}

inline std::string line_place(std::size_t line) { return "line " + std::to_string(line); }

inline std::string line_column_place(const std::string& text, std::size_t offset) {
  return "line " + std::to_string(line_of(text, offset)) + ", column " +
         std::to_string(column_of(text, offset));
}

}  // namespace krc::frontend
