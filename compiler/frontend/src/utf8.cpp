#include "utf8.hpp"

#include <cstdio>

namespace krc::frontend {

namespace {

// Length of the well-formed sequence starting at s[i], or 0 when s[i] does not start one.
std::size_t sequence_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  auto continuation = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    unsigned b = byte(k);
    return k < s.size() && b >= lo && b <= hi;
  };
  const unsigned b0 = byte(i);
  if (b0 <= 0x7F) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    // E0: no overlong forms (A0..BF); ED: no surrogates (80..9F).
    unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    return continuation(i + 1, lo, hi) && continuation(i + 2) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    // F0: no overlong forms (90..BF); F4: nothing above U+10FFFF (80..8F).
    unsigned lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return continuation(i + 1, lo, hi) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
  }
  return 0;
}

template <class OnBad>
std::string rewrite(std::string_view s, OnBad on_bad) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = sequence_length(s, i);
    if (n == 0) {
      on_bad(out, static_cast<unsigned char>(s[i]));
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string escape_invalid_utf8(std::string_view s) {
  return rewrite(s, [](std::string& out, unsigned char b) {
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02X", b);
    out += hex;
  });
}

std::string replace_invalid_utf8(std::string_view s) {
  return rewrite(s, [](std::string& out, unsigned char) { out += "\xEF\xBF\xBD"; });
}

std::optional<std::string> invalid_utf8_problem(std::string_view name, std::string_view what) {
  auto bad = first_invalid_utf8(name);
  if (!bad) return std::nullopt;
  return std::string(what) + " \"" + escape_invalid_utf8(name) + "\" is not valid UTF-8 (byte " +
         std::to_string(*bad + 1) + "): krc keeps names in JSON, which holds only UTF-8 text";
}

}  // namespace krc::frontend
