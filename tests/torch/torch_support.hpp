#pragma once
// Helpers for the tests of tools/krc_torch.py (PyTorch, in the project's venv Python) and
// `krc export`. Where that Python cannot import torch a test says kSkipMessage and returns;
// ctest marks it skipped (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "test_support.hpp"

namespace krc::test {

inline constexpr const char* kSkipMessage =
    "skipped: the venv Python cannot import torch (run tools/setup.sh, or set KRC_VENV)";

// The Python the tests run: the venv tools/setup.sh makes, $KRC_VENV/bin/python (default
// .venv in the source tree).
std::string python();

bool torch_available();

// Runs python() with `args` (quoted) and `input` on stdin; status, stdout, stderr.
CommandResult run_python(const TempDir& dir, const std::vector<std::string>& args,
                         const std::string& input = "");

// Runs a Python program given as text, with `args`.
CommandResult run_python_code(const TempDir& dir, const std::string& code,
                              const std::vector<std::string>& args = {},
                              const std::string& input = "");

// tools/krc_torch.py on `model` with `options`, the words on stdin one per line ("a b c");
// the JSON object it prints for each word. Fails the test when the script fails.
std::vector<nlohmann::json> run_krc_torch(const TempDir& dir, const std::string& model,
                                          const std::vector<std::vector<std::string>>& words,
                                          const std::vector<std::string>& options = {});

// `krc compile` of a zoo automaton (automata/zoo/NAME.json) into dir/FILE; fails the test
// when it fails. Returns the path.
std::string compile_zoo(const TempDir& dir, const std::string& name, const std::string& file,
                        const std::vector<std::string>& options);

// `krc run FILE --json` on one word; fails the test when it fails.
nlohmann::json krc_run(const std::string& model, const std::vector<std::string>& word,
                       const std::vector<std::string>& options = {});

// Uniformly random words, as letter names, and the automaton's states after every prefix.
struct Words {
  std::vector<std::vector<std::string>> letters;
  std::vector<nlohmann::json> states;  // JSON arrays of state names, <bos> first
};
Words random_words(const Automaton& automaton, std::mt19937_64& rng, int count, int min_length,
                   int max_length);

}  // namespace krc::test

// Skips the rest of a test case where torch is missing.
#define KRC_REQUIRE_TORCH()              \
  do {                                   \
    if (!krc::test::torch_available()) { \
      MESSAGE(krc::test::kSkipMessage);  \
      return;                            \
    }                                    \
  } while (false)
