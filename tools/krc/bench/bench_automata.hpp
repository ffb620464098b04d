#pragma once
// The automata `krc bench compile` measures: the description files of a directory (by default
// the repository's automata/zoo), or a zoo family at a series of sizes.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc::cli {

// With `family` non-empty: zoo_automaton(family, n) for each n of `sizes` (its default size
// when there are none), each with the file "zoo". Otherwise every description file (.json,
// .dot, .gv, .jff) of `directory`, by name; an empty directory means automata/zoo next to the
// working directory or the krc binary. Throws InputError naming what is missing or broken.
std::vector<std::pair<Automaton, std::filesystem::path>> bench_automata(
    const std::string& directory, const std::string& family, const std::vector<int>& sizes);

}  // namespace krc::cli
