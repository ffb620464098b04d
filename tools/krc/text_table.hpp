#pragma once
// Plain-text tables for the krc command's reports.
#include <functional>
#include <string>
#include <vector>

namespace krc::cli {

// Rows of cells as aligned lines, two blanks between columns: a column is left-aligned where
// `left(column)` says so, else right-aligned; trailing blanks are dropped.
std::vector<std::string> aligned(const std::vector<std::vector<std::string>>& cells,
                                 const std::function<bool(std::size_t)>& left);

}  // namespace krc::cli
