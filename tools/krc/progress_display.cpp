#include "progress_display.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>

namespace krc::cli {

ProgressDisplay::ProgressDisplay(bool wanted) : wanted_(wanted), terminal_(isatty(STDERR_FILENO)) {}

void ProgressDisplay::clear() {
  if (shown_ && terminal_) std::cerr << "\r" << std::string(width_, ' ') << "\r" << std::flush;
  shown_ = false;
}

void ProgressDisplay::show(std::string line, double seconds) {
  if (!wanted_ || seconds < 2.0) return;
  if (!terminal_) {
    if (shown_ && seconds < last_ + 10.0) return;
    std::cerr << line << "\n" << std::flush;
    last_ = seconds;
    shown_ = true;
    return;
  }
  width_ = std::max(width_, line.size());
  line.resize(width_, ' ');  // over the longer line before it
  std::cerr << "\r" << line << std::flush;
  shown_ = true;
}

}  // namespace krc::cli
