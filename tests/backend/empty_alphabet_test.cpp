// An automaton with no letters reads only the empty word: compile builds the network of no
// layers under every strategy, and each public planner either plans it or refuses it with a
// LimitError that says why (never a crash). Oracle: the automaton's initial state, the only
// state a word of no letters reaches.
#include <doctest/doctest.h>

#include "krc/automata/input_error.hpp"
#include "krc/backend/compile.hpp"
#include "krc/decompose/holonomy.hpp"
#include "krc/runtime/forward.hpp"
#include "strategies/strategy.hpp"

using namespace krc;

namespace {

// Three states, the last initial: a network that named state 0 would be caught.
Automaton no_letters() { return Automaton("none", {"p", "q", "r"}, {}, {}, 2, {1}); }

}  // namespace

TEST_CASE("empty alphabet: every strategy compiles the network of no layers") {
  const Automaton a = no_letters();
  for (Strategy s : {Strategy::Auto, Strategy::Scan, Strategy::Kr, Strategy::OneLayer}) {
    CAPTURE(to_string(s));
    CompileOptions options;
    options.strategy = s;
    options.max_len = 16;
    const CompileResult result = compile(a, options);
    const Network& net = result.network;
    net.check_shapes();
    CHECK(net.layers.empty());
    CHECK(net.vocabulary == std::vector<std::string>{"<bos>"});
    CHECK(net.states == a.states());
    CHECK(result.reason.find("the alphabet is empty") != std::string::npos);
    const Eigen::MatrixXd logits = ForwardPass(net).run(std::vector<LetterId>{});
    REQUIRE(logits.rows() == 1);
    Eigen::Index best = 0;
    logits.row(0).maxCoeff(&best);
    CHECK(best == static_cast<Eigen::Index>(a.initial()));
    CHECK(net.compiler["precision"]["exact_in"]["bf16"] == 16);
  }
}

TEST_CASE("empty alphabet: the planners plan it or refuse it by name") {
  const Automaton a = no_letters();
  CompileOptions options;
  options.max_len = 16;
  for (Strategy s : {Strategy::Scan, Strategy::Kr, Strategy::OneLayer}) {
    CAPTURE(to_string(s));
    try {
      (void)plan(a, options, s);
    } catch (const LimitError& e) {
      CHECK(std::string(e.what()).find("the alphabet is empty") != std::string::npos);
    }
  }
  try {
    (void)plan_onelayer(a, 16, OneLayerOptions{});
  } catch (const LimitError& e) {
    CHECK(std::string(e.what()).find("the alphabet is empty") != std::string::npos);
  }
  CHECK_FALSE(plan_clamped_walk(a, 16).has_value());  // no letter moves a cell
  const HolonomyDecomposition h = HolonomyDecomposition::compute(a);
  CHECK(h.level_count() >= 0);
  (void)plan_kr(h, 16, KrOptions{});
}
