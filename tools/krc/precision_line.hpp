#pragma once
// The lines `krc compile` and `krc info` print about number formats: the precision a network
// was compiled for and, per format, the largest length the bounds certify (the `compiler`
// metadata's "precision" member, compile.cpp); and the claim `krc compile --certify` proved.
#include <nlohmann/json.hpp>
#include <string>

namespace krc::cli {

// "precision: compiled for bf16; exact in fp32 up to max-len 4,096, bf16 up to 4,096, fp16 up
// to 4,096\n", or "" when the notes carry no such member of the expected types.
std::string precision_line(const nlohmann::json& compiler);

// On stderr, "krc: warning: FILE is not certified in bf16 (exact in: fp32 up to max-len 64);
// its answers there may be wrong" when `arithmetic` (krc run's and verify's --arithmetic) is
// bf16 or fp16 and the notes do not certify it: the command line's side of the warning the
// Python frameworks raise (krc.certified.UncertifiedFormatWarning, issue 33). Returns whether
// it warned.
bool warn_if_uncertified(const nlohmann::json& compiler, const std::string& arithmetic,
                         const std::string& file);

// "certified at compile time (krc compile --certify): every word up to max-len 64 in bf16,
// rule selector, margin 2; krc certify FILE proves it again and writes the certificate\n",
// from the `compiler` metadata's "certified" member (the certificate's claim), or "".
std::string certified_line(const nlohmann::json& compiler);

}  // namespace krc::cli
