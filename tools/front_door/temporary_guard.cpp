#include "temporary_guard.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <stdexcept>

#include "output_file.hpp"

namespace krc::front_door {

namespace {

// The temporaries being written, for the signal handlers (which may only read them): files to
// unlink (or, when one is a subdirectory, to remove once emptied, so subdirectories come after
// what they hold), then at most one directory to remove.
constexpr std::size_t kMaxGuarded = 16384;
std::array<const char*, kMaxGuarded> g_files{};
volatile std::sig_atomic_t g_file_count = 0;
const char* g_directory = nullptr;
volatile std::sig_atomic_t g_writing = 0;

// Set by exit_on_interrupt: SIGINT ends krc with status 130 and a message, not by the signal.
volatile std::sig_atomic_t g_interrupt_exits = 0;

constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temporaries_and_stop(int signal) {
  if (g_writing) {
    for (std::sig_atomic_t i = 0; i < g_file_count; ++i)
      if (unlink(g_files[i]) != 0) rmdir(g_files[i]);
    if (g_directory) rmdir(g_directory);
  }
  if (signal == SIGINT && g_interrupt_exits) {
    static constexpr char kMessage[] = "krc: interrupted\n";
    [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    _exit(130);
  }
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigaction(signal, &action, nullptr);
  raise(signal);  // delivered when the handler returns: krc ends by the signal it got
}

}  // namespace

TemporaryGuard::TemporaryGuard(std::vector<std::string> files, std::string directory, bool signals)
    : files_(std::move(files)), directory_(std::move(directory)), signals_(signals) {
  if (files_.size() > kMaxGuarded)
    throw std::length_error("more than " + std::to_string(kMaxGuarded) + " files in one output");
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &previous_[3]);
  if (!signals_) return;
  g_file_count = 0;
  for (std::size_t i = 0; i < files_.size() && i < kMaxGuarded; ++i) g_files[i] = files_[i].c_str();
  g_file_count = static_cast<std::sig_atomic_t>(std::min(files_.size(), kMaxGuarded));
  g_directory = directory_.empty() ? nullptr : directory_.c_str();
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_stop;
  sigemptyset(&action.sa_mask);
  for (int s : kSignals) sigaddset(&action.sa_mask, s);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &action, &previous_[i]);
  g_writing = 1;
}

TemporaryGuard::~TemporaryGuard() {
  sigaction(SIGXFSZ, &previous_[3], nullptr);
  if (!signals_) return;
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &previous_[i], nullptr);
  g_writing = 0;
  g_file_count = 0;
  g_directory = nullptr;
}

void exit_on_interrupt() {
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0 || current.sa_handler == SIG_IGN) return;
  g_interrupt_exits = 1;
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

}  // namespace krc::front_door
