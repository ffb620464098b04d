#include "text_table.hpp"

#include <algorithm>

namespace krc::cli {

std::vector<std::string> aligned(const std::vector<std::vector<std::string>>& cells,
                                 const std::function<bool(std::size_t)>& left) {
  std::vector<std::size_t> width;
  for (const auto& row : cells)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::vector<std::string> lines;
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += (c > 0 ? "  " : "") + (left(c) ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace krc::cli
