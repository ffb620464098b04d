#include "bench_automata.hpp"

#include <algorithm>

#include "krc/automata/input_error.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/frontend/load_automaton.hpp"

namespace krc::cli {

namespace {

namespace fs = std::filesystem;

// The zoo directory: next to the working directory, or to the binary (build/krc or
// build/tools/krc), like `krc bench decompose` finds tests/reference.
fs::path find_zoo() {
  std::vector<fs::path> candidates{fs::path("automata") / "zoo"};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / ".." / "automata" / "zoo");
    candidates.push_back(exe.parent_path() / ".." / ".." / "automata" / "zoo");
  }
  for (const auto& c : candidates)
    if (fs::is_directory(c, ec)) return c.lexically_normal();
  throw InputError("--automata", "",
                   "no automata/zoo directory next to the working directory or the krc binary; "
                   "give --automata DIR");
}

// The description files in `dir`, by name: the extensions load_automaton knows.
std::vector<fs::path> automaton_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir.string(), "", "not a directory");
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string ext = it->path().extension().string();
    if (it->is_regular_file(ec) &&
        (ext == ".json" || ext == ".dot" || ext == ".gv" || ext == ".jff"))
      files.push_back(it->path());
  }
  if (ec) throw InputError(dir.string(), "", "cannot list the directory: " + ec.message());
  if (files.empty())
    throw InputError(dir.string(), "", "no automaton files (.json, .dot, .gv, .jff)");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<std::pair<Automaton, fs::path>> bench_automata(const std::string& directory,
                                                           const std::string& family,
                                                           const std::vector<int>& sizes) {
  std::vector<std::pair<Automaton, fs::path>> automata;
  if (!family.empty()) {
    if (sizes.empty()) automata.emplace_back(zoo_automaton(family), "zoo");
    for (int n : sizes) automata.emplace_back(zoo_automaton(family, n), "zoo");
    return automata;
  }
  for (const auto& file : automaton_files(directory.empty() ? find_zoo() : fs::path(directory)))
    automata.emplace_back(load_automaton(file.string()), file);
  return automata;
}

}  // namespace krc::cli
