#pragma once
// Shared by the frontend tests: write a description to a temporary file and load it, and
// check that an InputError names the file and the place.
#include <doctest/doctest.h>

#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/frontend/load_automaton.hpp"
#include "test_support.hpp"

namespace krc::test {

inline std::filesystem::path frontend_data(const std::string& name) {
  return source_dir() / "tests" / "frontend" / "data" / name;
}

// Loads `text` saved as `name`.
inline Automaton load_text(const std::string& name, const std::string& text,
                           const LoadOptions& options = {}) {
  TempDir dir;
  return load_automaton(write_file(dir, name, text), options);
}

// Loads `text` saved as `name`, expecting an InputError; returns it for further checks after
// checking that it names the file and that its place is `place` (when given).
inline InputError load_error(const std::string& name, const std::string& text,
                             const std::string& place = "", const LoadOptions& options = {}) {
  TempDir dir;
  std::string path = write_file(dir, name, text);
  try {
    load_automaton(path, options);
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(std::string(e.what()).find(path) != std::string::npos);
    if (!place.empty()) {
      CHECK(e.place() == place);
      CHECK(std::string(e.what()).find(place) != std::string::npos);
    }
    return e;
  }
  FAIL("no InputError for " << name);
  return InputError("", "", "");
}

}  // namespace krc::test
