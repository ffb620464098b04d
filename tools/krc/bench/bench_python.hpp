#pragma once
// What the benchmark suites that run Python (`krc bench torch`, `krc bench frameworks`) share:
// finding their script in tools/, the Python to run it with, and quoting for the shell.
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

}  // namespace krc::cli
