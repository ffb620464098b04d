// What auto decides from plans before building: the 55-state TCP model of AALpy
// (tests/reference/realworld) has 114,377 images of its state set, past auto's limit, so auto
// does not decompose it and keeps scan, whose plan it knows; a cascade deeper than scan's plan
// is not built. Oracles: the automaton's own image orbit, counted here by a plain breadth-first
// search, the verifier on the chosen network, and the cascade built by --strategy kr.
#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "krc/automata/input_error.hpp"
#include "krc/backend/compile.hpp"
#include "krc/frontend/load_automaton.hpp"
#include "krc/runtime/verifier.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// Images of Q under words, up to `limit` of them.
std::size_t images_up_to(const Automaton& a, std::size_t limit) {
  std::vector<bool> all(a.state_count(), true);
  std::set<std::vector<bool>> seen{all};
  std::vector<std::vector<bool>> queue{all};
  for (std::size_t i = 0; i < queue.size() && seen.size() <= limit; ++i)
    for (LetterId l = 0; l < a.letter_count(); ++l) {
      std::vector<bool> image(a.state_count(), false);
      for (std::size_t q = 0; q < a.state_count(); ++q)
        if (queue[i][q]) image[a.letter_action(l)[q]] = true;
      if (seen.insert(image).second) queue.push_back(image);
    }
  return seen.size();
}

}  // namespace

TEST_CASE("auto: a model with more images than auto decomposes keeps scan without kr's tables") {
  const auto path =
      test::reference_dir() / "realworld" / "files" / "aalpy__TCP_tcp_server_bsd_trans.dot";
  const Automaton a = load_automaton(path.string());
  REQUIRE(images_up_to(a, std::size_t{1} << 14) > (std::size_t{1} << 14));
  CompileOptions options;
  options.max_len = 64;
  const CompileResult result = compile(a, options);
  CHECK(result.strategy == Strategy::Scan);
  CHECK(result.reason.find("kr was not possible (the image orbit") != std::string::npos);
  VerifyOptions verify_options;
  verify_options.exhaustive_length = 2;
  verify_options.random_words = 20;
  CHECK(verify(result.network, a, verify_options).ok());
}

TEST_CASE("auto: a cascade whose plan is deeper than scan is not built") {
  const Automaton a = test::reference_automaton("full_transformations_4");
  CompileOptions options;
  options.max_len = 256;  // scan: 8 layers
  const CompileResult chosen = compile(a, options);
  CHECK(chosen.strategy == Strategy::Scan);
  CHECK(chosen.network.size().layers == 8);
  options.strategy = Strategy::Kr;  // the oracle: the cascade built
  const int kr_layers = compile(a, options).network.size().layers;
  REQUIRE(kr_layers > 8);
  CHECK(chosen.reason.find("kr was not possible (its plan has " + std::to_string(kr_layers) +
                           " layers, more than scan's 8)") != std::string::npos);
}

TEST_CASE("auto: the comparison gives every built network's size, the kept one's included") {
  // Oracle: each strategy compiled on its own (the same plan and network auto builds).
  for (const char* name : {"parity", "flipflop_3", "gridworld_4", "abab"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    CompileOptions options;
    options.max_len = 64;
    const CompileResult chosen = compile(a, options);
    bool first = true;
    for (Strategy s : {Strategy::Scan, Strategy::Kr, Strategy::OneLayer}) {
      CAPTURE(to_string(s));
      options.strategy = s;
      CompileResult alone;
      try {
        alone = compile(a, options);
      } catch (const LimitError&) {
        CHECK(chosen.reason.find(std::string("; ") + to_string(s) + " was not possible") !=
              std::string::npos);
        continue;
      }
      const auto size = alone.network.size();
      const std::string layers = std::to_string(size.layers);
      const std::string parameters = test::with_commas(size.parameters);
      const std::string expected =
          first ? std::string("auto: ") + to_string(s) + " has " + layers + " layers and " +
                      parameters + " parameters"
                : std::string(", ") + to_string(s) + " " + layers + " and " + parameters;
      CHECK(chosen.reason.find(expected) != std::string::npos);
      first = false;
      if (s != Strategy::Kr) continue;
      // The kr strategy's plan is reported whichever network auto kept.
      CHECK(chosen.kr.has_value() == alone.kr.has_value());
      CHECK(chosen.walk.has_value() == alone.walk.has_value());
      if (alone.kr) CHECK(chosen.kr->levels.size() == alone.kr->levels.size());
      if (alone.walk) CHECK(chosen.walk->cells == alone.walk->cells);
    }
  }
}
