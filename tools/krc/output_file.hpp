#pragma once
// Output files appear whole or not at all: written next to the target, then renamed.
#include <iostream>
#include <string>
#include <string_view>

namespace krc::cli {

// Writes `contents` to `path` atomically; "-" means standard output.
void write_output(const std::string& path, std::string_view contents);

}  // namespace krc::cli
