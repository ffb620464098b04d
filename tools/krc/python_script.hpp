#pragma once
// What the subcommands that run a Python script of tools/ share (`krc bench torch`, `krc bench
// frameworks`, `krc export --format onnx`): finding the script, the Python to run it with, the
// extension built beside this binary, quoting for the shell, and reading the script's exit.
#include <filesystem>
#include <string>

namespace krc::cli {

// tools/NAME: the option, else tools/NAME under the working directory, else beside the binary
// (BUILD/../tools, BUILD/../../tools). An InputError naming --script when none exists.
std::filesystem::path find_tool_script(const std::string& option, const std::string& name);

// The Python with torch: the option, else the venv tools/setup.sh makes ($KRC_VENV, default
// .venv in the repository root beside the script's tools/), else python3 on the PATH.
std::string find_python(const std::string& option, const std::filesystem::path& script);

// The directory of the Python extension built with this binary (BUILD/python/krc, holding
// _core*.so), or empty when there is none (an installed krc: the installed package is its own).
std::filesystem::path core_dir_beside_binary();

// s in single quotes for /bin/sh.
std::string shell_quote(const std::string& s);

// Runs `command` (std::system) for `what` and returns krc's exit status: the script's own 0-2,
// 130 when it was stopped by Ctrl-C, 2 (with a message naming `python`) when it could not run
// or died otherwise.
int run_python_script(const std::string& command, const std::string& what,
                      const std::string& python);

}  // namespace krc::cli
