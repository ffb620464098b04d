#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "krc/automata/input_error.hpp"

namespace krc::cli {

namespace {

namespace fs = std::filesystem;

// The temporary file being written, for the signal handlers (which may only read it).
char* g_temporary = nullptr;
volatile std::sig_atomic_t g_writing = 0;
// A failed write to standard output was reported already; finish_standard_output stays quiet.
bool g_stdout_reported = false;

extern "C" void remove_temporary_and_stop(int signal) {
  if (g_writing) unlink(g_temporary);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigaction(signal, &action, nullptr);
  raise(signal);  // delivered when the handler returns: krc ends by the signal it got
}

// While it lives, an interrupted krc removes `path`; a file over the size limit (SIGXFSZ) is a
// write error instead of a core dump.
class TemporaryFileGuard {
 public:
  explicit TemporaryFileGuard(const std::string& path) : path_(path) {
    g_temporary = path_.data();
    struct sigaction action {};
    action.sa_handler = remove_temporary_and_stop;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < 3; ++i) sigaddset(&action.sa_mask, kSignals[i]);
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &action, &previous_[i]);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, &previous_[3]);
    g_writing = 1;
  }
  ~TemporaryFileGuard() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &previous_[i], nullptr);
    sigaction(SIGXFSZ, &previous_[3], nullptr);
    g_writing = 0;
    g_temporary = nullptr;
  }
  TemporaryFileGuard(const TemporaryFileGuard&) = delete;
  TemporaryFileGuard& operator=(const TemporaryFileGuard&) = delete;

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  std::string path_;  // the handlers read its bytes
  struct sigaction previous_[4]{};
};

// Writes all of `contents` to `fd`; false with errno set on failure.
bool write_all(int fd, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t written = write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
  throw InputError(path, "", what + ": " + std::strerror(error));
}

void write_in_place(const std::string& path, std::string_view contents) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot write here", errno);
  const bool written = write_all(fd, contents);
  const int error = errno;
  if (close(fd) != 0 && written) fail(path, "write failed", errno);
  if (!written) fail(path, "write failed", error);
}

}  // namespace

void write_output(const std::string& path, std::string_view contents) {
  if (path.empty()) throw InputError("-o", "", "the output path is empty");
  if (path == "-") {
    std::cout.flush();
    std::fflush(stdout);
    if (write_all(STDOUT_FILENO, contents)) return;
    g_stdout_reported = true;
    fail("<stdout>", "write failed", errno);
  }
  fs::path target(path);
  // A device or pipe (-o /dev/null, a FIFO) is written in place: renaming a temporary file
  // over it would replace the device itself with a regular file.
  std::error_code status_error;
  if (fs::exists(target, status_error) && !fs::is_regular_file(target, status_error))
    return write_in_place(path, contents);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir)) throw InputError(path, "", "directory does not exist");
  std::random_device rd;
  const std::string temp =
      (dir / (".krc-tmp-" + std::to_string(rd()) + "-" + target.filename().string())).string();
  TemporaryFileGuard guard(temp);
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "cannot write here", errno);
  bool written = write_all(fd, contents);
  int error = errno;
  if (close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (!written) {
    unlink(temp.c_str());
    fail(path, "write failed", error);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    error = errno;
    unlink(temp.c_str());
    fail(path, "cannot replace the file", error);
  }
}

void guard_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The opposite direction: reading stdin or writing stdout/stderr then fails (EBADF).
    const int opened = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
    if (opened >= 0 && opened != fd) {
      dup2(opened, fd);
      close(opened);
    }
  }
}

void finish_standard_output() {
  errno = 0;
  std::cout.flush();  // with stdio in sync, this flushes stdout, and the error shows here
  int error = errno;
  bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (error == 0) error = errno;
  if (std::fclose(stdout) != 0) {
    failed = true;
    if (error == 0) error = errno;
  }
  if (failed && !g_stdout_reported)
    throw InputError("<stdout>", "",
                     std::string("write failed") +
                         (error ? ": " + std::string(std::strerror(error)) : " (output lost)"));
}

}  // namespace krc::cli
