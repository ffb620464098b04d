#include "python_script.hpp"

#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "krc/automata/input_error.hpp"

namespace krc::cli {

namespace fs = std::filesystem;

fs::path find_tool_script(const std::string& option, const std::string& name) {
  if (!option.empty()) return option;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates{fs::path("tools") / name};
  if (!ec) {
    candidates.push_back(exe.parent_path() / ".." / "tools" / name);
    candidates.push_back(exe.parent_path() / ".." / ".." / "tools" / name);
  }
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) return c;
  throw InputError("--script", "", "tools/" + name + " not found; give its path with --script");
}

std::string find_python(const std::string& option, const fs::path& script) {
  if (!option.empty()) return option;
  const char* env = std::getenv("KRC_VENV");
  const fs::path root =
      (env != nullptr && *env != '\0') ? fs::path(env) : script.parent_path() / ".." / ".venv";
  const fs::path venv = root / "bin" / "python";
  std::error_code ec;
  if (fs::exists(venv, ec)) return venv.string();
  return "python3";
}

fs::path core_dir_beside_binary() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path dir = exe.parent_path() / "python" / "krc";
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("_core", 0) == 0 && it->path().extension() == ".so")
      return dir;
  return {};
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int run_python_script(const std::string& command, const std::string& what,
                      const std::string& python) {
  std::fflush(stdout);
  const int raw = std::system(command.c_str());
  // std::system ignores SIGINT while it waits; the script, in the same process group, gets it.
  if (WIFSIGNALED(raw) && WTERMSIG(raw) == SIGINT) return 130;
  if (raw == -1 || !WIFEXITED(raw)) {
    std::cerr << "krc: error: " << what << ": " << python << " did not finish (status " << raw
              << ")\n";
    return 2;
  }
  const int status = WEXITSTATUS(raw);
  if (status == 126 || status == 127) {
    std::cerr << "krc: error: " << what << ": cannot run " << python
              << " (give --python or KRC_VENV, or run tools/setup.sh to make .venv)\n";
    return 2;
  }
  if (status == 130) return 130;
  return status <= 2 ? status : 2;
}

}  // namespace krc::cli
