#pragma once
// Shared by the frontend tests: write a description to a temporary file and load it, and
// check that an InputError names the file and the place.
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

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

// krc's reading of a language against an independent oracle: `in_language(word by letter
// names)` must equal whether `a` ends in an accepting state, on every word of up to `length`
// letters and on 200 random words of up to `random_length` letters.
template <class Oracle>
void check_language_against(const Automaton& a, Oracle in_language, std::size_t length,
                            std::size_t random_length) {
  const std::set<StateId> accepting(a.accepting().begin(), a.accepting().end());
  auto run = [&](const std::vector<LetterId>& word) {
    std::vector<std::string> named;
    for (LetterId l : word) named.push_back(a.letter_name(l));
    CAPTURE(named);
    CHECK((accepting.count(a.run(word).back()) > 0) == in_language(named));
  };
  std::vector<std::vector<LetterId>> words{{}};
  for (std::size_t w = 0; w < words.size(); ++w) {
    run(words[w]);
    if (words[w].size() < length)
      for (LetterId l = 0; l < a.letter_count(); ++l) {
        auto next = words[w];
        next.push_back(l);
        words.push_back(std::move(next));
      }
  }
  std::mt19937 rng(34);
  for (int k = 0; k < 200; ++k) {
    std::vector<LetterId> word(std::uniform_int_distribution<std::size_t>(0, random_length)(rng));
    for (auto& l : word)
      l = std::uniform_int_distribution<LetterId>(0,
                                                  static_cast<LetterId>(a.letter_count() - 1))(rng);
    run(word);
  }
}

}  // namespace krc::test
