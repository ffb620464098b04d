#pragma once
// The options of every command that reads an automaton description (compile, decompose,
// info), declared once so that they are one vocabulary: --input-format, --complete,
// --initial, and --regex with --alphabet in place of the file. `--format` stays the output format
// of `krc decompose`; on the other commands it is refused with a pointer to --input-format.
#include <CLI/CLI.hpp>

#include "krc/decompose/decompose_options.hpp"
#include "krc/frontend/load_automaton.hpp"

namespace krc::cli {

// `file` is the command's positional description file: it becomes optional, and exactly one
// of it and --regex must be given.
void add_automaton_input_options(CLI::App& sub, LoadOptions& load, CLI::Option* file);

// For commands without an output format: `--format` names --input-format in its error.
void refuse_format_option(CLI::App& sub);

// "--max-images (now 4,194,304) raises the limit": the option of a decomposition limit and
// its current value, for the error message.
std::string decompose_limit_hint(const DecomposeLimitError& e);

}  // namespace krc::cli
