// tools/draw: the DOT of the network and attention pictures, the attention pass, and the
// rendering through the Graphviz library. The SVG and PNG themselves are checked against the
// weights file's metadata and a numpy forward in tests/python/test_draw.py.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <tuple>

#include "krc/automata/input_error.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/decompose/holonomy.hpp"
#include "krc/decompose/holonomy_report.hpp"
#include "krc/runtime/attention_weights.hpp"
#include "network_drawing.hpp"
#include "tied_network.hpp"

using namespace krc;

namespace {

Network compiled(const std::string& family, std::optional<int> n, Strategy strategy) {
  CompileOptions options;
  options.strategy = strategy;
  options.max_len = 6;
  return compile(zoo_automaton(family, n), options).network;
}

}  // namespace

TEST_CASE("draw: the network's DOT has a box for every head and MLP block") {
  for (const auto& [family, n, strategy] :
       {std::tuple{"parity", std::optional<int>{}, Strategy::Scan},
        std::tuple{"cyclic", std::optional<int>{3}, Strategy::Kr}}) {
    CAPTURE(family);
    const Network net = compiled(family, n, strategy);
    const std::string dot = network_dot(net);
    CHECK(dot.rfind("digraph krc {", 0) == 0);
    for (std::size_t l = 0; l < net.layers.size(); ++l) {
      for (std::size_t h = 0; h < net.layers[l].heads.size(); ++h)
        CHECK(dot.find("\"a" + std::to_string(l) + ".h" + std::to_string(h) + "\" [label=") !=
              std::string::npos);
      if (net.layers[l].mlp)
        CHECK(dot.find("\"m" + std::to_string(l) + "\" [shape=plaintext") != std::string::npos);
    }
    for (const auto& sub : net.subspaces)
      CHECK(dot.find(">" + sub.name + "<") != std::string::npos);
  }
}

TEST_CASE("draw: attention patterns are causal distributions and the pass is right") {
  const Automaton automaton = zoo_automaton("cyclic", 3);
  const Network net = compiled("cyclic", 3, Strategy::Kr);
  const std::vector<LetterId> word{0, 1, 1, 0, 1};
  std::vector<StateId> states;
  const auto patterns = attention_patterns(net, word, &states);
  long long heads = 0;
  for (const auto& layer : net.layers) heads += static_cast<long long>(layer.heads.size());
  REQUIRE(static_cast<long long>(patterns.size()) == heads);
  for (const auto& p : patterns) {
    REQUIRE(p.rows() == 6);
    for (int t = 0; t < 6; ++t) {
      CHECK(p.row(t).head(t + 1).sum() == doctest::Approx(1.0).epsilon(1e-12));
      CHECK(p.row(t).minCoeff() >= 0.0);
      if (t + 1 < 6) CHECK(p.row(t).tail(5 - t).cwiseAbs().maxCoeff() == 0.0);
    }
  }
  CHECK(states == automaton.run(word));
  const std::string dot = attention_dot(net, word);
  CHECK(dot.find("a0.h0 q=5 k=0 w=") != std::string::npos);
  CHECK_THROWS_AS(attention_dot(net, std::vector<LetterId>(7, 0)), std::invalid_argument);
}

TEST_CASE("draw: the format comes from the extension") {
  CHECK(draw_format_from_path("a/b.svg") == DrawFormat::Svg);
  CHECK(draw_format_from_path("b.PNG") == DrawFormat::Png);
  CHECK(draw_format_from_path("b.dot") == DrawFormat::Dot);
  CHECK(draw_format_from_path("b.gv") == DrawFormat::Dot);
  CHECK_THROWS_AS(draw_format_from_path("b.jpg"), InputError);
  CHECK_THROWS_AS(draw_format_from_path("svg"), InputError);
}

TEST_CASE("draw: Graphviz renders SVG and PNG, and refuses text that is no graph") {
  const Network net = compiled("parity", std::nullopt, Strategy::Scan);
  const std::string dot = network_dot(net);
  CHECK(render_dot(dot, DrawFormat::Dot) == dot);
  const std::string svg = render_dot(dot, DrawFormat::Svg);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("<title>a2.h0</title>") != std::string::npos);
  const std::string png = render_dot(dot, DrawFormat::Png);
  CHECK(png.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  CHECK_THROWS_AS(render_dot("digraph {", DrawFormat::Svg), LimitError);
}

TEST_CASE("draw: the picture's weights are the runtime's, tied maxima included") {
  // The tied network (tests/support/tied_network.hpp): every letter ties for the maximum, so
  // hardmax shares the weight, hard attention's select head takes the latest letter alone and
  // softmax leaves <bos> its share; the formulas there are the oracle.
  const std::vector<LetterId> word{1, 0, 1, 0, 0};  // b a b a a
  const std::vector<StateId> seen = test::seen_b_automaton().run(word);
  for (HeadKind kind : {HeadKind::Select, HeadKind::Average})
    for (AttentionKind attention :
         {AttentionKind::Hardmax, AttentionKind::Hard, AttentionKind::Softmax}) {
      CAPTURE(to_string(kind));
      CAPTURE(to_string(attention));
      std::vector<StateId> states;
      const auto patterns =
          attention_patterns(test::tied_network(attention, kind, 6), word, &states);
      REQUIRE(patterns.size() == 1);
      for (int t = 0; t <= 5; ++t) {
        const Eigen::VectorXd expected = test::tied_network_weights(attention, kind, t);
        CHECK((patterns[0].row(t).head(t + 1).transpose() - expected).cwiseAbs().maxCoeff() <=
              1e-15);
        CHECK(patterns[0].row(t).sum() == doctest::Approx(1.0).epsilon(1e-15));
      }
      if (attention == AttentionKind::Hardmax) CHECK(states == seen);
    }

  // Compiled networks: the first layer reads the embeddings, so its heads' weights are
  // attention_pattern of their queries and keys there, bit for bit.
  for (const auto& [family, n, strategy] :
       {std::tuple{"parity", std::optional<int>{}, Strategy::Scan},
        std::tuple{"flipflop", std::optional<int>{2}, Strategy::Kr},
        std::tuple{"cyclic", std::optional<int>{3}, Strategy::OneLayer}}) {
    CAPTURE(family);
    const Network net = compiled(family, n, strategy);
    const std::vector<LetterId> letters{1, 0, 1, 1, 0, 1};
    Eigen::MatrixXd x(7, net.d_model());
    for (int t = 0; t < 7; ++t)
      x.row(t) =
          (net.token_embedding.row(t == 0 ? 0 : letters[t - 1] + 1) + net.position_embedding.row(t))
              .cast<double>();
    const auto patterns = attention_patterns(net, letters);
    REQUIRE(!net.layers.empty());
    for (std::size_t h = 0; h < net.layers[0].heads.size(); ++h) {
      const AttentionHead& head = net.layers[0].heads[h];
      const Eigen::MatrixXd q = x * head.query.cast<double>(), k = x * head.key.cast<double>();
      CHECK(patterns[h] == attention_pattern(q, k, net.attention_scale, net.attention, head.kind));
    }
    for (const auto& p : patterns)
      for (int t = 0; t < 7; ++t) CHECK(p.row(t).sum() == doctest::Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("draw: the levels picture names every level and component of the JSON report") {
  for (const auto& [family, n] :
       {std::pair{"flipflop", std::optional<int>{2}}, std::pair{"cyclic", std::optional<int>{3}},
        std::pair{"symmetric", std::optional<int>{3}},
        std::pair{"gridworld", std::optional<int>{4}}}) {
    CAPTURE(family);
    const HolonomyDecomposition h = HolonomyDecomposition::compute(zoo_automaton(family, n));
    const nlohmann::json report = decomposition_to_json(h);
    const std::string svg = draw_decomposition(report, DrawFormat::Svg);
    REQUIRE(svg.find("<svg") != std::string::npos);
    // Graphviz writes each line of a label as one <text> element.
    auto has_text = [&](const std::string& text) {
      return svg.find(">" + text + "</text>") != std::string::npos;
    };
    const auto& levels = report["levels"];
    REQUIRE(!levels.empty());
    CHECK(static_cast<int>(levels.size()) == h.level_count());
    for (const auto& level : levels) {
      const std::string L = std::to_string(level["level"].get<int>());
      CAPTURE(L);
      CHECK(has_text("level " + L + ": " + std::to_string(level["states"].get<int>()) + " states" +
                     (level["dummy"].get<bool>() ? " (with the dummy)" : "")));
      for (const auto& c : level["components"]) {
        const std::string tiles = std::to_string(c["tiles"].get<int>());
        const std::string group = c["group"]["name"];
        CHECK(has_text(
            c["group"]["order"].get<long long>() == 1 ? tiles : "(" + tiles + "," + group + ")"));
        CHECK(has_text("class " + std::to_string(c["class"].get<int>()) + ", " + tiles + " tiles"));
        std::string representative;
        for (const auto& s : c["representative"])
          representative += (representative.empty() ? "" : ", ") + s.get<std::string>();
        CHECK(has_text("representative {" + representative + "}"));
        CHECK(svg.find(">group " + group + ", order " +
                       std::to_string(c["group"]["order"].get<long long>())) != std::string::npos);
      }
    }
  }
  CHECK_THROWS_AS(decomposition_levels_dot(nlohmann::json::object()), std::invalid_argument);
}
