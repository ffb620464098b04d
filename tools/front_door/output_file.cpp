#include "output_file.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/automata/interrupt.hpp"
#include "temporary_guard.hpp"

namespace krc::front_door {

namespace {

namespace fs = std::filesystem;

// A failed write to standard output was reported already; finish_standard_output stays quiet.
bool g_stdout_reported = false;

// Writes all of `contents` to `fd`; false with errno set on failure.
// Writes of at most 16 MiB, so that Ctrl-C in Python stops a large output between them.
bool write_all(int fd, std::string_view contents) {
  constexpr std::size_t kChunk = std::size_t{1} << 24;
  while (!contents.empty()) {
    if (interrupt_requested()) {
      errno = EINTR;
      return false;
    }
    const ssize_t written = write(fd, contents.data(), std::min(contents.size(), kChunk));
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
  if (interrupt_requested()) throw Interrupted{};  // the temporary is gone already
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

// Creates `file` (which must not exist) holding `contents`; the error names `target`.
void write_new_file(const std::string& file, std::string_view contents, const std::string& target) {
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(target, "cannot write here", errno);
  bool written = write_all(fd, contents);
  int error = errno;
  if (close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (!written) {
    unlink(file.c_str());
    fail(target, "write failed", error);
  }
}

// Refuses an existing `target` that this process may not write (its effective ids: root may).
void refuse_unwritable(const std::string& path, const fs::path& target, const std::string& what) {
  if (faccessat(AT_FDCWD, target.c_str(), W_OK, AT_EACCESS) != 0) fail(path, what, errno);
}

// A name beside `target` that nothing else uses: ".krc-tmp-<random>-<name>".
std::string temporary_beside(const fs::path& target) {
  std::random_device rd;
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  return (dir / (".krc-tmp-" + std::to_string(rd()) + "-" + target.filename().string())).string();
}

// The path a write lands on: a link is followed (the file it names is replaced, the link
// kept), so that writing through a link never turns the link into a copy.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return fs::path(path);
  fs::path real = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path) : real;
}

// Whether `inner` lies inside the directory `outer` (both existing).
bool inside(const fs::path& inner, const fs::path& outer) {
  std::error_code ec;
  const fs::path a = fs::canonical(inner, ec);
  if (ec) return false;
  const fs::path b = fs::canonical(outer, ec);
  if (ec) return false;
  auto [end, _] = std::mismatch(b.begin(), b.end(), a.begin(), a.end());
  return end == b.end();
}

// The subdirectories `files` names ("a/b/c.json": "a", "a/b"), parents first.
std::vector<std::string> subdirectories(const std::vector<DirectoryFile>& files) {
  std::vector<std::string> dirs;
  for (const auto& f : files)
    for (std::size_t slash = f.first.find('/'); slash != std::string::npos;
         slash = f.first.find('/', slash + 1))
      dirs.push_back(f.first.substr(0, slash));
  std::sort(dirs.begin(), dirs.end());  // a parent sorts before what it holds
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  return dirs;
}

void refuse_unwritable_entry(const std::string& path, const fs::path& at, const std::string& name) {
  if (faccessat(AT_FDCWD, at.c_str(), W_OK, AT_EACCESS) != 0)
    fail(path, "cannot replace the directory: krc may not write \"" + name + "\" in it", errno);
}

// Refuses an existing directory holding anything but the files of `files` (regular files by
// those names) and their subdirectories (replacing it would destroy what krc did not write), or
// one of those krc may not write (0500, another user's: the old copy would stay, half removed).
void refuse_foreign_directory(const std::string& path, const std::vector<DirectoryFile>& files,
                              const std::vector<std::string>& dirs,
                              const std::string& prefix = "") {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(path) / prefix, ec)) {
    const std::string name = prefix + entry.path().filename().string();
    const bool is_link = entry.is_symlink(ec);
    if (!is_link && entry.is_directory(ec) && std::binary_search(dirs.begin(), dirs.end(), name)) {
      refuse_unwritable_entry(path, entry.path(), name);
      refuse_foreign_directory(path, files, dirs, name + "/");
      continue;
    }
    const bool ours =
        entry.is_regular_file(ec) && !is_link &&
        std::any_of(files.begin(), files.end(), [&](const auto& f) { return f.first == name; });
    if (!ours)
      throw InputError(path, "",
                       "is a directory holding \"" + name +
                           "\", which this output does not write; krc replaces only a new, "
                           "empty or earlier output's directory (choose another path, or remove "
                           "it)");
    refuse_unwritable_entry(path, entry.path(), name);
  }
  if (ec) fail(path, "cannot read the directory", ec.value());
}

// Removes what `files` wrote into `dir`, its subdirectories (the deepest first), then `dir`.
void remove_directory(const std::string& dir, const std::vector<DirectoryFile>& files,
                      const std::vector<std::string>& dirs) {
  for (const auto& f : files) unlink((fs::path(dir) / f.first).c_str());
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) rmdir((fs::path(dir) / *d).c_str());
  rmdir(dir.c_str());
}

// A name is a relative path of plain components: none empty, none starting with '.'. A bad one
// is krc's own mistake (the names are krc's), hence logic_error.
void refuse_bad_names(const std::vector<DirectoryFile>& files) {
  for (const auto& f : files) {
    const std::string& n = f.first;
    if (n.empty() || n[0] == '.' || n.back() == '/' || n.find("//") != std::string::npos ||
        n.find("/.") != std::string::npos)
      throw std::logic_error("write_output_directory: bad file name \"" + n + "\"");
  }
}

// What the signal handler removes from the temporary directory `temp`: the files, then the
// subdirectories, the deepest first (the order the handler removes in).
std::vector<std::string> guarded_paths(const std::string& temp,
                                       const std::vector<DirectoryFile>& files,
                                       const std::vector<std::string>& dirs) {
  std::vector<std::string> temp_files;
  for (const auto& f : files) temp_files.push_back((fs::path(temp) / f.first).string());
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d)
    temp_files.push_back((fs::path(temp) / *d).string());
  return temp_files;
}

// Creates the temporary directory `temp` with its subdirectories and writes `files` into it
// (at `temp_files`, guarded_paths's order); on failure nothing of it is left. Errors name `path`.
void fill_directory(const std::string& path, const std::string& temp,
                    const std::vector<std::string>& temp_files,
                    const std::vector<DirectoryFile>& files, const std::vector<std::string>& dirs) {
  if (mkdir(temp.c_str(), 0777) != 0) fail(path, "cannot create the directory", errno);
  try {
    for (const std::string& d : dirs)
      if (mkdir((fs::path(temp) / d).c_str(), 0777) != 0)
        fail(path, "cannot create the directory", errno);
    for (std::size_t i = 0; i < files.size(); ++i)
      write_new_file(temp_files[i], files[i].second, path);
  } catch (...) {
    remove_directory(temp, files, dirs);
    throw;
  }
}

// Puts the full temporary directory `temp` in place of an earlier output's directory `target`:
// exchanged with it in one step, then the earlier one removed.
void replace_earlier_directory(const std::string& path, const std::string& temp,
                               const fs::path& target, const std::vector<DirectoryFile>& files,
                               const std::vector<std::string>& dirs) {
  if (renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0) {
    // A file system without the exchange: move the old one aside first. For a moment the path
    // is missing, but it never holds a partial directory.
    const std::string old = temporary_beside(target);
    if (rename(target.c_str(), old.c_str()) != 0) {
      const int error = errno;
      remove_directory(temp, files, dirs);
      fail(path, "cannot replace the directory", error);
    }
    if (rename(temp.c_str(), target.c_str()) != 0) {
      const int error = errno;
      rename(old.c_str(), target.c_str());  // the earlier directory back where it was
      remove_directory(temp, files, dirs);
      fail(path, "cannot replace the directory", error);
    }
    remove_directory(old, files, dirs);
    return;
  }
  remove_directory(temp, files, dirs);  // now the earlier directory
}

}  // namespace

void refuse_output_over_inputs(const std::string& output, const std::vector<std::string>& inputs,
                               const std::string& option) {
  if (output == "-") return;
  std::error_code ec;
  const bool directory = fs::is_directory(output, ec);
  for (const std::string& input : inputs) {
    if (input == "-" || input.empty()) continue;
    if ((fs::equivalent(output, input, ec) && !ec) || (directory && inside(input, output)))
      throw InputError(output, option,
                       directory ? "holds the input file " + input +
                                       "; krc will not replace its input with its output"
                                 : "is the input file; krc will not replace its input with its "
                                   "output");
  }
}

void write_output(const std::string& path, std::string_view contents,
                  const OutputOptions& options) {
  if (path.empty()) throw InputError(options.option, "", "the output path is empty");
  if (path == "-") {
    std::cout.flush();
    std::fflush(stdout);
    if (write_all(STDOUT_FILENO, contents)) return;
    g_stdout_reported = true;
    fail("<stdout>", "write failed", errno);
  }
  refuse_output_over_inputs(path, options.inputs, options.option);
  const fs::path target = resolved(path);
  std::error_code status_error;
  const fs::file_status status = fs::status(target, status_error);
  if (fs::is_directory(status)) throw InputError(path, "", "is a directory; the output is a file");
  // A device or pipe (-o /dev/null, a FIFO) is written in place: renaming a temporary file
  // over it would replace the device itself with a regular file.
  if (fs::exists(status) && !fs::is_regular_file(status)) return write_in_place(path, contents);
  // A file krc may not write (read-only, or another user's) is refused, not replaced: renaming
  // over it needs only the directory's permission, which would bypass the file's own.
  if (fs::exists(status)) refuse_unwritable(path, target, "cannot write the file");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir)) throw InputError(path, "", "directory does not exist");
  const std::string temp = temporary_beside(target);
  TemporaryGuard guard({temp}, "", options.guard_signals);
  write_new_file(temp, contents, path);
  if (rename(temp.c_str(), target.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    fail(path, "cannot replace the file", error);
  }
}

void write_output_directory(const std::string& path, const std::vector<DirectoryFile>& files,
                            const OutputOptions& options) {
  if (path.empty()) throw InputError(options.option, "", "the output path is empty");
  if (path == "-")
    throw InputError(options.option, "", "this output is a directory; - cannot hold it");
  refuse_bad_names(files);
  const std::vector<std::string> dirs = subdirectories(files);
  refuse_output_over_inputs(path, options.inputs, options.option);
  const fs::path target = resolved(path);
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  const bool exists = fs::exists(status);
  if (exists && !fs::is_directory(status))
    throw InputError(path, "", "exists and is not a directory");
  if (exists) {
    refuse_unwritable(path, target, "cannot replace the directory");
    refuse_foreign_directory(path, files, dirs);
  }
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(parent)) throw InputError(path, "", "its parent directory does not exist");

  const std::string temp = temporary_beside(target);
  const std::vector<std::string> temp_files = guarded_paths(temp, files, dirs);
  TemporaryGuard guard(temp_files, temp, options.guard_signals);
  fill_directory(path, temp, temp_files, files, dirs);
  if (rename(temp.c_str(), target.c_str()) == 0) return;  // new, or an empty directory replaced
  if (!exists || (errno != ENOTEMPTY && errno != EEXIST)) {
    const int error = errno;
    remove_directory(temp, files, dirs);
    fail(path, "cannot create the directory", error);
  }
  replace_earlier_directory(path, temp, target, files, dirs);
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

}  // namespace krc::front_door
