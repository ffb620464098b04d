// The compiler's words for an automaton without letters begin with the clause every krc tool
// says (written here as the specification): the compile result's reason, which the weights file
// records, and the onelayer planner's refusal when it is asked directly.
#include <doctest/doctest.h>

#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/backend/compile.hpp"
#include "strategies/strategy.hpp"

using namespace krc;

namespace {

const std::string kClause = "the alphabet is empty: the network reads only the empty word";

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("empty alphabet: the compiler's reason and the onelayer refusal begin with the clause") {
  const Automaton a("none", {"p", "q"}, {}, {}, 1);
  CompileOptions options;
  options.max_len = 4;
  const CompileResult result = compile(a, options);
  CHECK(starts_with(result.reason, kClause + " (no layers"));
  CHECK(result.network.compiler["empty_alphabet"] == result.reason);

  std::string refusal;
  try {
    (void)plan_onelayer(a, 4, OneLayerOptions{});
  } catch (const LimitError& e) {
    refusal = e.what();
  }
  CHECK(starts_with(refusal, "onelayer: " + kClause + "; there is no letter to code"));
}
