#pragma once
// Runs the krc binary as a child process with what hostile-input tests need to observe: its
// peak memory (getrusage of that one child, from wait4), an address-space limit (prlimit --as:
// a run that ignored the budget fails fast instead of exhausting the shared machine), where its
// standard output goes (a file, /dev/full, or closed), a file size limit, the user it runs as
// (an ordinary one, for permission tests), and its process id for signals.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace krc::test {

struct ChildSpec {
  ChildSpec(std::vector<std::string> krc_args) : args(std::move(krc_args)) {}  // implicit
  std::vector<std::string> args;                                               // krc's arguments
  std::string stdin_path = "/dev/null";                                        // standard input
  std::optional<std::string> stdout_path;      // default: captured; "/dev/full" etc. otherwise
  bool close_stdout = false;                   // krc ... >&-
  std::optional<std::uint64_t> address_space;  // RLIMIT_AS in bytes
  std::optional<std::uint64_t> file_size;      // RLIMIT_FSIZE in bytes (a full disk)
  // Run as this user and group id, without supplementary groups (an ordinary user: directory
  // and file permissions apply). Needs root; test::can_drop_privileges() says whether it can.
  std::optional<unsigned> user;
  // The krc binary to run (default: the build's). An ordinary user may not reach the build
  // tree (a checkout in a 0700 folder), so those tests run a copy in a folder they share.
  std::optional<std::string> program;
};

struct ChildResult {
  int status = 0;  // exit status, or 128 + signal
  std::string out, err;
  std::uint64_t peak_bytes = 0;  // maximum resident set size
};

// The unprivileged user tests run krc as (nobody), and whether this process may switch to it.
constexpr unsigned kNobody = 65534;
bool can_drop_privileges();

// Starts krc; finish() waits for it and collects the result.
class Child {
 public:
  explicit Child(const ChildSpec& spec);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  pid_t pid() const { return pid_; }
  ChildResult finish();

 private:
  pid_t pid_ = -1;
  std::string dir_;  // holds the captured stdout and stderr
  bool captured_out_ = true;
};

inline ChildResult run_child(const ChildSpec& spec) { return Child(spec).finish(); }
inline ChildResult run_child(std::vector<std::string> args) {
  return run_child(ChildSpec(std::move(args)));
}

}  // namespace krc::test
