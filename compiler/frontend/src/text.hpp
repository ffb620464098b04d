#pragma once
// The frontend's small text helpers, shared by the readers (one definition each, so that the
// readers can be built as one unit).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace krc::frontend {

std::string lowercase(std::string s);    // ASCII letters only: format names and DOT keywords
std::string trim(const std::string& s);  // strips spaces, tabs and line ends at both ends

// A natural number written in digits only, below 2^31 (state numbers and counts of the
// line-based formats: Aldebaran, FSM).
std::optional<std::uint32_t> natural_number(const std::string& s);

// The note of the process-algebra readers (Aldebaran, FSM, ETF) when a file has internal moves:
// `actions` names them as the file spells them ("'tau'").
std::string internal_action_note(const std::string& file, const std::string& actions);

// The lines of a text one at a time, trimmed, with their 1-based numbers (the line-based
// readers: Aldebaran, FSM, RABIT, VTF).
class TextLines {
 public:
  explicit TextLines(const std::string& text) : text_(text) {}
  // The next line, trimmed, into `line`; false past the last one.
  bool next(std::string& line);
  std::size_t number() const { return number_; }  // of the line last read (0 before any)
  std::uint64_t count() const;                    // lines in the whole text (at least 1)

 private:
  const std::string& text_;
  std::size_t pos_ = 0, number_ = 0;
};

}  // namespace krc::frontend
