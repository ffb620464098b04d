#pragma once
// Reading a whole input without trusting its size. A regular file's size is checked before a
// byte is read; anything else (standard input, a pipe, /dev/zero) is read in chunks and stopped
// as soon as it passes the cap, so neither a sparse 20 GB file nor an endless device is read
// whole before a check.
#include <cstdint>
#include <istream>
#include <string>

namespace krc {

struct ReadLimit {
  std::uint64_t max_bytes = 0;
  // What the cap is, for "FILE: 20 GiB, more than the 376 MiB <reason>": "a description file
  // may have (1/32 of the memory budget, --max-memory 12 GiB: ...)".
  std::string reason;
  // Text formats have no NUL byte: stop at the first one (binary files, /dev/zero) with an
  // InputError at its line instead of reading on. A gzip stream (it begins with the bytes
  // 1f 8b) is read whole: its reader checks the text it decompresses.
  bool text = false;
};

// The whole file ("-": standard input, named "<stdin>" in messages). Errors: InputError (no
// such file, a directory, unreadable, a NUL byte in text), LimitError (over the cap).
std::string read_bounded(const std::string& path, const ReadLimit& limit);
// Up to the end of `in` (named `file` in messages), under the same rules.
std::string read_bounded(std::istream& in, const std::string& file, const ReadLimit& limit);

// Exactly `count` bytes from `in` into `out` (appended), in chunks, so that a short stream
// never costs a buffer of the declared size; InputError when the stream ends first.
void read_exactly(std::istream& in, std::uint64_t count, std::string& out, const std::string& file,
                  const std::string& what);

}  // namespace krc
