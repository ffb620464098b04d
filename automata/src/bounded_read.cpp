#include "krc/automata/bounded_read.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"

namespace krc {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

// "FILE: 20.0 GiB, more than the 376 MiB REASON" (`size` empty for a stream).
[[noreturn]] void over_limit(const std::string& file, const std::string& size,
                             const ReadLimit& limit) {
  throw LimitError(file + ": " + (size.empty() ? "" : size + ", ") + "more than the " +
                   byte_size_text(limit.max_bytes) + " " + limit.reason);
}

void check_text(const std::string& file, const std::string& text, std::size_t from) {
  const std::size_t nul = text.find('\0', from);
  if (nul == std::string::npos) return;
  const auto line =
      1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
  throw InputError(file, "line " + std::to_string(line),
                   "a NUL byte (at byte " + std::to_string(nul) +
                       "): this is not a text file (a weights file goes to krc verify, run or "
                       "info)");
}

}  // namespace

std::string read_bounded(std::istream& in, const std::string& file, const ReadLimit& limit) {
  std::string text;
  while (in) {
    const std::size_t before = text.size();
    const std::uint64_t room = limit.max_bytes - std::min<std::uint64_t>(limit.max_bytes, before);
    // One byte past the cap tells "over" from "exactly at".
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, room + 1));
    text.resize(before + want);
    in.read(text.data() + before, static_cast<std::streamsize>(want));
    text.resize(before + static_cast<std::size_t>(in.gcount()));
    if (in.bad()) throw InputError(file, "", "read error");
    // A gzip stream (magic 1f 8b) is binary; its text is checked once decompressed.
    const bool gzip = text.size() >= 2 && text[0] == '\x1f' && text[1] == '\x8b';
    if (limit.text && !gzip) check_text(file, text, before);
    if (text.size() > limit.max_bytes) over_limit(file, "", limit);
  }
  return text;
}

std::string read_bounded(const std::string& path, const ReadLimit& limit) {
  if (path == "-") return read_bounded(std::cin, "<stdin>", limit);
  struct stat info {};
  if (stat(path.c_str(), &info) != 0)
    throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw InputError(path, "", "is a directory, not a file");
  if (S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) > limit.max_bytes)
    over_limit(path, byte_size_text(static_cast<std::uint64_t>(info.st_size)), limit);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  return read_bounded(in, path, limit);
}

void read_exactly(std::istream& in, std::uint64_t count, std::string& out, const std::string& file,
                  const std::string& what) {
  std::uint64_t done = 0;
  while (done < count) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, count - done));
    const std::size_t before = out.size();
    out.resize(before + want);
    in.read(out.data() + before, static_cast<std::streamsize>(want));
    const auto got = static_cast<std::size_t>(in.gcount());
    out.resize(before + got);
    done += got;
    if (got < want) {
      if (in.bad()) throw InputError(file, what, "read error");
      throw InputError(file, what,
                       "the file ends after " + std::to_string(done) + " of " +
                           std::to_string(count) + " bytes");
    }
  }
}

}  // namespace krc
