// front_door::spelt_for: the command line's message as the Python bindings show it (issue 33),
// on messages written here by hand: the flags become keywords, a quoted command the call, a
// flag's own Python aside the aside; paths, words and the command line's door are untouched.
#include <doctest/doctest.h>

#include "compile_request.hpp"

using krc::front_door::Door;
using krc::front_door::spelt_for;

TEST_CASE("options: a message names keywords for Python and flags for the command line") {
  const std::string python[][2] = {
      {"more than the memory budget (--max-memory 1.00 MiB)",
       "more than the memory budget (max_memory 1.00 MiB)"},
      {"--initial 'q' is not a state", "initial 'q' is not a state"},
      {"name it with an extension (.json) or --input-format",
       "name it with an extension (.json) or input_format"},
      {"recompiling with `krc compile --norm layernorm` makes",
       "recompiling with `krc.compile(norm=\"layernorm\")` makes"},
      {"try `krc compile --certify`.", "try `krc.compile(certify=True)`."},
      {"; --allow-inexact (Python: allow_inexact=True) exports it anyway",
       "; allow_inexact=True exports it anyway"},
      // Not flags: a path, a word, a dash before a capital or a space, a bare command.
      {"/tmp/--out.json: x--y -- --X; check it with `krc verify`",
       "/tmp/--out.json: x--y -- --X; check it with `krc verify`"},
  };
  for (const auto& [command_line, keyword] : python) {
    CAPTURE(command_line);
    CHECK(spelt_for(Door::Python, command_line) == keyword);
    CHECK(spelt_for(Door::CommandLine, command_line) == command_line);
  }
}
