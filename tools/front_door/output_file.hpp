#pragma once
// The one writer of every output krc makes, for both doors (the krc command and the Python
// package): weights, exports, checkpoints, reports.
//
// Output is never lost silently and never destroys what its path names:
// - a regular file (or a new one) is written whole or not at all: a temporary file beside the
//   target, renamed over it; a failed write, flush or close removes the temporary;
// - a device, FIFO or any other non-regular target is written in place (-o /dev/null), never
//   replaced by a regular file; a directory is refused;
// - an existing target this process may not write (a read-only file, another user's file or
//   checkpoint directory) is refused, not replaced: renaming over it would need only the
//   directory's permission (root may write anything, so root replaces it);
// - a target that is one of the inputs, or links to one, is refused before anything is written;
// - a checkpoint directory is built beside its target and renamed into place in one step, so no
//   partial directory is ever left; an existing directory is replaced only when it holds
//   nothing but the files the checkpoint writes (an earlier checkpoint), else refused;
// - every error is an InputError (exit status 2) that names the target, never the temporary.
// With signal guarding on (the command line), SIGINT, SIGTERM or SIGHUP during a write remove
// the temporaries, after which krc ends by that signal. Python keeps its own handlers (off).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace krc::front_door {

struct OutputOptions {
  // Files the output must not be: a weights file being exported, an automaton being compiled.
  std::vector<std::string> inputs;
  // How the target is named in messages about the option (the command line: "-o").
  std::string option = "-o";
  // The command line's: a signal during the write removes the temporary and ends krc.
  bool guard_signals = true;
};

// Writes `contents` to `path` as above; "-" means standard output. The path must not be empty.
void write_output(const std::string& path, std::string_view contents,
                  const OutputOptions& options = {});

// One file of a directory output: its name inside the directory and its bytes. A name may hold
// subdirectories ("parity.kr/gpt2/config.json"), which are made too; no component may be empty
// or start with '.'.
using DirectoryFile = std::pair<std::string, std::string>;

// Writes `files` as the directory `path` (created beside it, renamed into place). An existing
// directory is replaced only when it holds nothing but those files and their subdirectories.
void write_output_directory(const std::string& path, const std::vector<DirectoryFile>& files,
                            const OutputOptions& options = {});

// InputError when `output` is (or links to) one of `inputs`, or, for a directory output,
// holds one: checked before the work, so a refusal costs nothing.
void refuse_output_over_inputs(const std::string& output, const std::vector<std::string>& inputs,
                               const std::string& option = "-o");

// The command line's Ctrl-C: SIGINT removes any temporary being written, prints "krc:
// interrupted" and ends krc with status 130 at once, whatever it is doing (nothing else is on
// disk before the one writer renames its temporary into place). Left alone when SIGINT was
// ignored when krc started (a background job of a shell without job control).
void exit_on_interrupt();

// Run first: a standard stream the caller closed (krc >&-) is reopened on /dev/null for the
// opposite direction, so that writing it fails visibly instead of a file krc opens later
// taking its descriptor and receiving what was meant for the terminal.
void guard_standard_streams();
// Run last: flushes and closes standard output; InputError when anything written to it was
// lost (a full disk, a closed pipe, a closed descriptor).
void finish_standard_output();

}  // namespace krc::front_door
