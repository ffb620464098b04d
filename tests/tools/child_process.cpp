#include "child_process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "test_support.hpp"

namespace krc::test {

namespace fs = std::filesystem;

namespace {

void redirect(const std::string& path, int fd, int flags) {
  const int opened = open(path.c_str(), flags, 0644);
  if (opened < 0) _exit(127);
  dup2(opened, fd);
  close(opened);
}

}  // namespace

bool can_drop_privileges() { return geteuid() == 0; }

Child::Child(const ChildSpec& spec) {
  char pattern[] = "/tmp/krc-child-XXXXXX";
  if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  captured_out_ = !spec.stdout_path && !spec.close_stdout;
  const std::string binary = spec.program.value_or(krc_binary());
  std::vector<std::string> argv_text{binary};
  argv_text.insert(argv_text.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = dir_ + "/out", err = dir_ + "/err", in = spec.stdin_path;
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ > 0) return;
  // The child: only async-signal-safe calls from here on.
  redirect(in, 0, O_RDONLY);
  if (spec.close_stdout)
    close(1);
  else
    redirect(spec.stdout_path ? *spec.stdout_path : out, 1, O_WRONLY | O_CREAT | O_TRUNC);
  redirect(err, 2, O_WRONLY | O_CREAT | O_TRUNC);
  if (spec.address_space) {
    rlimit limit{*spec.address_space, *spec.address_space};
    setrlimit(RLIMIT_AS, &limit);
  }
  if (spec.file_size) {
    rlimit limit{*spec.file_size, *spec.file_size};
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  if (spec.user && (setgroups(0, nullptr) != 0 || setgid(*spec.user) != 0 ||
                    setuid(*spec.user) != 0 || getuid() != *spec.user))
    _exit(126);
  execv(binary.c_str(), argv.data());
  _exit(127);
}

Child::~Child() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

ChildResult Child::finish() {
  int raw = 0;
  rusage usage{};
  if (wait4(pid_, &raw, 0, &usage) != pid_) throw std::runtime_error("wait4 failed");
  pid_ = -1;
  ChildResult result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  result.peak_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
  if (captured_out_) result.out = read_text(dir_ + "/out");
  result.err = read_text(dir_ + "/err");
  return result;
}

}  // namespace krc::test
