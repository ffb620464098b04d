#pragma once
// Output is never lost silently. Files appear whole or not at all: written to a temporary file
// next to the target, then renamed over it; a failed write, flush or close removes the
// temporary and is an InputError (exit status 2), and so is SIGINT, SIGTERM or SIGHUP during the
// write, after which the temporary is removed and krc ends by that signal. Standard output is
// checked when krc is done (finish_standard_output).
#include <string>
#include <string_view>

namespace krc::cli {

// Writes `contents` to `path` atomically; "-" means standard output, a device or FIFO is
// written in place. The path must not be empty.
void write_output(const std::string& path, std::string_view contents);

// Run first: a standard stream the caller closed (krc >&-) is reopened on /dev/null for the
// opposite direction, so that writing it fails visibly instead of a file krc opens later
// taking its descriptor and receiving what was meant for the terminal.
void guard_standard_streams();
// Run last: flushes and closes standard output; InputError when anything written to it was
// lost (a full disk, a closed pipe, a closed descriptor).
void finish_standard_output();

}  // namespace krc::cli
