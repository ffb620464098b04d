#include "text.hpp"

#include <algorithm>
#include <cctype>

namespace krc::frontend {

std::string lowercase(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::optional<std::uint32_t> natural_number(const std::string& s) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v >= (std::uint64_t{1} << 31)) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

std::uint64_t TextLines::count() const {
  return static_cast<std::uint64_t>(std::count(text_.begin(), text_.end(), '\n')) + 1;
}

bool TextLines::next(std::string& line) {
  if (pos_ >= text_.size()) return false;
  const auto end = text_.find('\n', pos_);
  line = trim(text_.substr(pos_, end == std::string::npos ? std::string::npos : end - pos_));
  pos_ = end == std::string::npos ? text_.size() : end + 1;
  ++number_;
  return true;
}

std::string internal_action_note(const std::string& file, const std::string& actions) {
  return file + ": the internal action " + actions +
         " is read as an epsilon move: the automaton reads the system's visible traces";
}

}  // namespace krc::frontend
