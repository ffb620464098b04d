#pragma once
// gzip-compressed descriptions (LearnLib and benchmark collections ship .dot.gz, .aut.gz):
// decompressed with zlib under the same cap as a plain description, so that a decompression
// bomb stops at the cap, having allocated no more than it, and checked for NUL bytes as plain
// text is.
#include <string>

#include "krc/automata/bounded_read.hpp"

namespace krc::frontend {

// Whether `data` begins with gzip's magic bytes 1f 8b.
bool is_gzip(const std::string& data);

// The decompressed text (every member of a multi-member stream, as gzip -d gives it).
// LimitError past limit.max_bytes; InputError for a damaged stream or a NUL byte in the text.
std::string gunzip(const std::string& data, const std::string& file, const ReadLimit& limit);

}  // namespace krc::frontend
