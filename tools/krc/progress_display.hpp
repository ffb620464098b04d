#pragma once
// Progress on stderr once a run has taken more than two seconds (krc verify, krc suite): on a
// terminal one line rewritten in place; elsewhere (a log file, a CI job) a whole line every ten
// seconds, since a carriage return there only piles the updates onto one line.
#include <cstddef>
#include <string>

namespace krc::cli {

class ProgressDisplay {
 public:
  explicit ProgressDisplay(bool wanted);
  // Shows `line`, the state of a run `seconds` old.
  void show(std::string line, double seconds);
  // Erases the line, so that the report starts on a clean one.
  void clear();

 private:
  bool wanted_, terminal_, shown_ = false;
  std::size_t width_ = 0;
  double last_ = 0.0;
};

}  // namespace krc::cli
