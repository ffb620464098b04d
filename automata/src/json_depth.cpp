#include "krc/automata/json_depth.hpp"

namespace krc {

std::optional<std::size_t> json_too_deep(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::string json_depth_problem(int max_depth) {
  return "JSON nested deeper than " + std::to_string(max_depth) + " levels (krc's limit)";
}

}  // namespace krc
