#pragma once
// Signal guarding of the temporaries the one writer (output_file.cpp) makes: apart from the
// writer because the handlers and the state they read are a concept of their own (what a signal
// may touch), and so that neither file passes the 400 lines the house allows.
#include <signal.h>

#include <string>
#include <vector>

namespace krc::front_door {

// While it lives, an interrupted krc removes the temporaries; a file over the size limit
// (SIGXFSZ) is a write error instead of a core dump. Without signal guarding (Python), it only
// ignores SIGXFSZ. `files` are unlinked (or, when one is a subdirectory, removed once emptied,
// so subdirectories come after what they hold), then `directory` (when not empty) is removed.
class TemporaryGuard {
 public:
  TemporaryGuard(std::vector<std::string> files, std::string directory, bool signals);
  ~TemporaryGuard();
  TemporaryGuard(const TemporaryGuard&) = delete;
  TemporaryGuard& operator=(const TemporaryGuard&) = delete;

 private:
  std::vector<std::string> files_;  // the handlers read their bytes
  std::string directory_;
  bool signals_;
  struct sigaction previous_[4]{};
};

}  // namespace krc::front_door
