#include "gzip_input.hpp"

#include <zlib.h>

#include <algorithm>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"

namespace krc::frontend {

bool is_gzip(const std::string& data) {
  return data.size() >= 2 && data[0] == '\x1f' && data[1] == '\x8b';
}

std::string gunzip(const std::string& data, const std::string& file, const ReadLimit& limit) {
  z_stream zs{};
  // 16 + MAX_WBITS: a gzip wrapper (header and CRC checked), not raw deflate or zlib.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    throw InputError(file, "", "cannot start zlib to decompress the gzip stream");
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  std::size_t consumed = 0;
  std::string text;
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  for (;;) {
    // zlib counts its input in 32-bit units: feed it at most 1 GiB at a time.
    const std::size_t left = data.size() - consumed;
    zs.avail_in = static_cast<uInt>(std::min<std::size_t>(left, std::size_t{1} << 30));
    const std::size_t before = text.size();
    // One byte past the cap tells "over" from "exactly at"; nothing past it is allocated.
    const std::uint64_t room = limit.max_bytes - std::min<std::uint64_t>(limit.max_bytes, before);
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, room + 1));
    text.resize(before + want);
    zs.next_out = reinterpret_cast<Bytef*>(text.data() + before);
    zs.avail_out = static_cast<uInt>(want);
    const uInt avail_in_before = zs.avail_in;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    consumed += avail_in_before - zs.avail_in;
    text.resize(before + (want - zs.avail_out));
    if (text.size() > limit.max_bytes)
      throw LimitError(file + ": decompresses to more than the " + byte_size_text(limit.max_bytes) +
                       " " + limit.reason);
    if (rc == Z_STREAM_END) {
      // Another member may follow (gzip -d reads them all); trailing zeros are padding.
      const std::size_t rest = data.find_first_not_of('\0', consumed);
      if (rest == std::string::npos) break;
      if (!is_gzip(data.substr(rest, 2)))
        throw InputError(file, "", "bytes after the end of the gzip stream");
      consumed = rest;
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()) + consumed);
      if (inflateReset(&zs) != Z_OK) throw InputError(file, "", "cannot restart zlib");
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && consumed == data.size())
      throw InputError(file, "", "the gzip stream is cut short (it ends before its last block)");
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw InputError(file, "",
                       std::string("not a valid gzip stream: ") + (zs.msg ? zs.msg : "zlib error"));
  }
  if (is_gzip(text)) return text;  // binary: the caller refuses a second layer
  const std::size_t nul = text.find('\0');
  if (nul != std::string::npos)
    throw InputError(
        file,
        "line " +
            std::to_string(1 + std::count(text.begin(),
                                          text.begin() + static_cast<std::ptrdiff_t>(nul), '\n')),
        "a NUL byte in the decompressed text (at byte " + std::to_string(nul) +
            "): this is not a compressed text file");
  return text;
}

}  // namespace krc::frontend
