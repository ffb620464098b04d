#pragma once
// The built-in zoo: the classic semiautomata of the shortcuts-to-automata experiments, each a
// family with an optional size parameter n. zoo_automaton(family, n) is identical (name,
// states and their order, letters and their order, transitions, initial state) to the
// reference file tests/reference/automata/<family>_<n>.json (or <family>.json for the families
// without a parameter: parity, quaternion, abab).
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc {

struct ZooFamily {
  std::string name;         // e.g. "dihedral"
  std::string description;  // one line
  std::string parameter;    // what n means, e.g. "stations on the ring"; empty without one
  bool has_parameter = false;
  int default_n = 0, min_n = 0, max_n = 0;  // meaningful only with a parameter
};

// Every family, in the order `krc zoo` lists them.
std::vector<ZooFamily> zoo_families();

// The automaton of `family` with parameter n (its default when absent). Throws InputError
// (file "zoo", place = family) for an unknown family, an n out of range, or an n given to a
// family without a parameter.
Automaton zoo_automaton(const std::string& family, std::optional<int> n = std::nullopt);

// "cyclic_5" for (cyclic, 5), "parity" for parity: the automaton's name and its file's stem.
std::string zoo_automaton_name(const std::string& family, std::optional<int> n = std::nullopt);

}  // namespace krc
