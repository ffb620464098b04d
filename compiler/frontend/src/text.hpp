#pragma once
// The frontend's small text helpers, shared by the readers (one definition each, so that the
// readers can be built as one unit).
#include <string>

namespace krc::frontend {

std::string lowercase(std::string s);    // ASCII letters only: format names and DOT keywords
std::string trim(const std::string& s);  // strips spaces, tabs and line ends at both ends

}  // namespace krc::frontend
