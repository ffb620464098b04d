// The backend's primitives, each alone in a small hand-built program (a "chamber", as Tracr's
// craft/chamber tests do), run by the plain dense forward pass of the test support and checked
// against the mathematics they promise.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "chamber.hpp"
#include "ir/assemble.hpp"
#include "ir/schedule.hpp"
#include "primitives/attention_heads.hpp"
#include "primitives/categorical.hpp"
#include "primitives/features.hpp"
#include "primitives/residue.hpp"

using namespace krc;

namespace {

using test::Chamber;
using test::random_word;

constexpr double kTolerance = 1e-6;

}  // namespace

TEST_CASE("primitives: input features hold the letter, BOS, 1, t, codes of t and t-k, ln(T+1-t)") {
  Chamber c(20);
  const Subspace tokens = c.features.tokens(), bos = c.features.bos(), one = c.features.one(),
                 code = c.features.position_code(), back = c.features.position_code_back(3),
                 position = c.features.position(), log = c.features.log_remaining();
  CHECK(code.width == 5);  // codes of 0..20
  std::mt19937_64 rng(1);
  const auto word = random_word(rng, 20);
  const Eigen::MatrixXd x = c.run(word);
  for (int t = 0; t <= 20; ++t) {
    CAPTURE(t);
    for (int a = 0; a < 3; ++a)
      CHECK(x(t, tokens[a]) == (t > 0 && word[t - 1] == static_cast<LetterId>(a) ? 1.0 : 0.0));
    CHECK(x(t, bos[0]) == (t == 0 ? 1.0 : 0.0));
    CHECK(x(t, one[0]) == 1.0);
    CHECK(x(t, position[0]) == t);
    CHECK(x(t, log[0]) == doctest::Approx(std::log(21.0 - t)).epsilon(1e-6));
    for (int b = 0; b < code.width; ++b) {
      CHECK(x(t, code[b]) == ((t >> b) & 1 ? 1.0 : -1.0));
      CHECK(x(t, back[b]) == ((std::max(t - 3, 0) >> b) & 1 ? 1.0 : -1.0));
    }
  }
}

TEST_CASE("primitives: a fetch head copies the stream from max(t - k, 0)") {
  for (int k : {1, 2, 5}) {
    CAPTURE(k);
    Chamber c(40);
    const Subspace tokens = c.features.tokens();
    const Subspace dest = c.program.layout().allocate("copy", {"a", "b", "c"});
    std::vector<Entry> copy;
    for (int a = 0; a < 3; ++a) copy.push_back({tokens[a], dest[a], 1.0f});
    c.program.add(fetch_from_offset(c.features, k, copy, "fetch", {RoleKind::LetterBack}), "test");
    std::mt19937_64 rng(k);
    const auto word = random_word(rng, 40);
    for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
      const Eigen::MatrixXd x = c.run(word, attention);
      for (int t = 0; t <= 40; ++t)
        for (int a = 0; a < 3; ++a) {
          const int from = std::max(t - k, 0);
          const double expected =
              from > 0 && word[from - 1] == static_cast<LetterId>(a) ? 1.0 : 0.0;
          CHECK(std::abs(x(t, dest[a]) - expected) < kTolerance);
        }
    }
  }
}

TEST_CASE("primitives: a latest-flagged head copies the value at the latest flagged position") {
  // Letter c is a reset that writes its position's flag; a and b write a value to remember.
  Chamber c(60);
  const Subspace tokens = c.features.tokens();
  const Subspace flag = c.program.layout().allocate_scalar("flag");
  const Subspace written = c.program.layout().allocate("written", {"a", "b"});
  const Subspace memory = c.program.layout().allocate("memory", {"a", "b"});
  c.program.embed_token(0, flag[0], 1.0f);  // BOS counts as a reset to nothing
  c.program.embed_token(3, flag[0], 1.0f);
  // The value remembered is the letter before the reset... here simply: a reset by c writes
  // "a" when at an even position, "b" at an odd one, through the position feature.
  std::vector<Entry> copy{{written[0], memory[0], 1.0f}, {written[1], memory[1], 1.0f}};
  for (int t = 1; t <= 60; ++t) c.program.embed_position(t, written[t % 2], 1.0f);
  c.program.add(latest_flagged(c.features, flag[0], copy, "memory", {RoleKind::Memory}), "test");
  std::mt19937_64 rng(3);
  const auto word = random_word(rng, 60);
  for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
    const Eigen::MatrixXd x = c.run(word, attention);
    int latest = 0;
    for (int t = 0; t <= 60; ++t) {
      if (t > 0 && word[t - 1] == 2) latest = t;
      for (int v = 0; v < 2; ++v) {
        const double expected = latest > 0 && latest % 2 == v ? 1.0 : 0.0;
        CHECK(std::abs(x(t, memory[v]) - expected) < kTolerance);
      }
    }
  }
}

TEST_CASE("primitives: a prefix-sum head writes the sum of its values over positions 1..t") {
  Chamber c(200);
  const Subspace tokens = c.features.tokens();
  const Subspace count = c.program.layout().allocate_scalar("count");
  // a counts 1, b counts 2, c counts 0.
  c.program.add(prefix_sum(c.features, {{tokens[0], 1.0f}, {tokens[1], 2.0f}}, count[0], "sum",
                           {RoleKind::CounterSum}),
                "test");
  std::mt19937_64 rng(4);
  const auto word = random_word(rng, 200);
  const Eigen::MatrixXd x = c.run(word);
  double sum = 0;
  for (int t = 0; t <= 200; ++t) {
    if (t > 0) sum += word[t - 1] == 0 ? 1 : word[t - 1] == 1 ? 2 : 0;
    CHECK(std::abs(x(t, count[0]) - sum) < 1e-6 * (1 + sum));
  }
}

TEST_CASE("primitives: a lookup unit fires exactly when every input takes its value") {
  Chamber c(30);
  const Subspace tokens = c.features.tokens();
  const Subspace previous = c.program.layout().allocate("previous", {"a", "b", "c"});
  std::vector<Entry> copy;
  for (int a = 0; a < 3; ++a) copy.push_back({tokens[a], previous[a], 1.0f});
  c.program.add(fetch_from_offset(c.features, 1, copy, "fetch", {}), "test");
  const Subspace out = c.program.layout().allocate("bigram", {"ab", "ca"});
  const Categorical now = Categorical::one_hot(tokens, {"a", "b", "c"});
  const Categorical before = Categorical::one_hot(previous, {"a", "b", "c"});
  MlpOp mlp;
  mlp.name = "lookup";
  add_lookup_unit(mlp, {&before, &now}, {0, 1}, {{out[0], 1.0f}});  // "a" then "b"
  add_lookup_unit(mlp, {&before, &now}, {2, 0}, {{out[1], 1.0f}});  // "c" then "a"
  c.program.add(std::move(mlp), "test");
  std::mt19937_64 rng(5);
  const auto word = random_word(rng, 30);
  const Eigen::MatrixXd x = c.run(word);
  for (int t = 2; t <= 30; ++t) {
    CHECK(std::abs(x(t, out[0]) - (word[t - 2] == 0 && word[t - 1] == 1)) < kTolerance);
    CHECK(std::abs(x(t, out[1]) - (word[t - 2] == 2 && word[t - 1] == 0)) < kTolerance);
  }
}

TEST_CASE("primitives: a residue comb turns a count into the one-hot of count mod p") {
  for (int p : {2, 3, 5}) {
    CAPTURE(p);
    Chamber c(120);
    const Subspace tokens = c.features.tokens();
    const Subspace count = c.program.layout().allocate_scalar("count");
    c.program.add(
        prefix_sum(c.features, {{tokens[0], 1.0f}, {tokens[1], 1.0f}}, count[0], "sum", {}),
        "test");
    std::vector<std::string> residues;
    for (int r = 0; r < p; ++r) residues.push_back(std::to_string(r));
    const Subspace residue = c.program.layout().allocate("residue", residues);
    MlpOp comb;
    comb.name = "comb";
    add_residue_units(comb, {{{count[0], 1.0f}}, 120, c.features.one()[0]}, p, residue);
    c.program.add(std::move(comb), "test");
    std::mt19937_64 rng(p);
    const auto word = random_word(rng, 120);
    const Eigen::MatrixXd x = c.run(word);
    int n = 0;
    for (int t = 0; t <= 120; ++t) {
      if (t > 0 && word[t - 1] != 2) ++n;
      for (int r = 0; r < p; ++r) CHECK(std::abs(x(t, residue[r]) - (n % p == r)) < 1e-5);
    }
  }
}

TEST_CASE(
    "primitives: the scheduler puts each op in the earliest sublayer its dependencies allow") {
  Program p({"<bos>", "a"}, {"q"}, 4);
  auto& layout = p.layout();
  const Subspace x = layout.allocate_scalar("x"), y = layout.allocate_scalar("y"),
                 z = layout.allocate_scalar("z");
  auto head = [](int from, int to) {
    HeadOp h;
    h.name = "head";
    h.key_dim = 1;
    h.value_dim = 1;
    h.query.push_back({from, 0, 1.0f});
    h.key.push_back({from, 0, 1.0f});
    h.value.push_back({from, 0, 1.0f});
    h.output.push_back({0, to, 1.0f});
    return h;
  };
  auto mlp = [](int from, int to) {
    MlpOp m;
    m.name = "mlp";
    m.add_unit({{from, 1.0f}}, 0.0f, {{to, 1.0f}});
    return m;
  };
  p.add(head(x[0], y[0]), "1");  // reads x: sublayer 0
  p.add(mlp(y[0], z[0]), "2");   // reads y after op 1 wrote it: strictly later, an MLP: 1
  p.add(head(x[0], z[0]), "3");  // writes z after op 2 wrote it: strictly later, attention: 2
  p.add(mlp(x[0], y[0]), "4");   // rewrites y (op 1: later) that op 2 read (same or later): 1
  p.add(head(y[0], x[0]), "5");  // reads y after op 4 wrote it: strictly later, attention: 2
  const Schedule s = schedule(p);
  CHECK(s.sublayer == std::vector<int>{0, 1, 2, 1, 2});
  CHECK(s.layers == 2);
  const Network net = assemble(p, s);
  REQUIRE(net.layers.size() == 2);
  CHECK(net.layers[0].heads.size() == 1);
  REQUIRE(net.layers[0].mlp.has_value());
  CHECK(net.layers[0].mlp->hidden() == 2);  // ops 2 and 4 share the MLP
  CHECK(net.layers[1].heads.size() == 2);
  CHECK_FALSE(net.layers[1].mlp.has_value());
  CHECK(net.layers[0].purpose == "1; 2; 4");
}

TEST_CASE("primitives: assembly keeps every name and role and covers the stream with subspaces") {
  Chamber c(8);
  const Subspace tokens = c.features.tokens();
  const Role role{RoleKind::CounterSum, 2, 1, 3, 0};
  const Subspace count = c.program.layout().allocate_scalar("count", role);
  c.program.add(prefix_sum(c.features, {{tokens[0], 1.0f}}, count[0], "sum", role), "test");
  MlpOp m;
  m.name = "two blocks";
  m.begin_block("first", {RoleKind::CounterResidue, 2, 1, 3, 0});
  m.add_unit({{count[0], 1.0f}}, 0.0f, {});
  m.begin_block("second", {RoleKind::CounterResidue, 2, 1, 3, 1});
  m.add_unit({{count[0], 1.0f}}, -1.0f, {});
  c.program.add(std::move(m), "test");
  const Network net = assemble(c.program, schedule(c.program));
  REQUIRE(net.layers.size() == 1);
  CHECK(net.layers[0].heads.at(0).role == role);
  REQUIRE(net.layers[0].mlp->blocks.size() == 2);
  CHECK(net.layers[0].mlp->blocks[1].name == "second");
  CHECK(net.layers[0].mlp->blocks[1].role.step == 1);
  CHECK(net.layers[0].mlp->blocks[1].first == 1);
  int next = 0;
  for (const auto& s : net.subspaces) {
    CHECK(s.first == next);
    next += s.width;
  }
  CHECK(next == net.d_model());
  CHECK_NOTHROW(net.check_shapes());
}

TEST_CASE("primitives: window sums add up t's block so far and the whole block before") {
  const int block = 8;
  Chamber c(70);
  const Subspace tokens = c.features.tokens();
  const Subspace now = c.program.layout().allocate_scalar("in block");
  const Subspace before = c.program.layout().allocate_scalar("block before");
  const Terms value{{tokens[0], 1.0f}, {tokens[1], 2.0f}};  // a counts 1, b 2, c 0
  c.program.add(window_sum(c.features, block, false, value, now[0], "now", {}), "test");
  c.program.add(window_sum(c.features, block, true, value, before[0], "before", {}), "test");
  std::mt19937_64 rng(9);
  const auto word = random_word(rng, 70);
  const Eigen::MatrixXd x = c.run(word);
  auto weight = [&](int j) { return word[j - 1] == 0 ? 1.0 : word[j - 1] == 1 ? 2.0 : 0.0; };
  for (int t = 1; t <= 70; ++t) {
    CAPTURE(t);
    const int b = (t - 1) / block;
    double in_block = 0, in_before = 0;
    for (int j = b * block + 1; j <= t; ++j) in_block += weight(j);
    for (int j = (b - 1) * block + 1; b > 0 && j <= b * block; ++j) in_before += weight(j);
    CHECK(std::abs(x(t, now[0]) - in_block) < 1e-6);
    CHECK(std::abs(x(t, before[0]) - in_before) < 1e-6);
  }
}

TEST_CASE("primitives: a block sum adds the values at the block starts up to t") {
  const int block = 5;
  Chamber c(60);
  const Subspace tokens = c.features.tokens();
  // The value: the letter's weight, but only at block starts (a value the head must not see
  // elsewhere is 0 there by construction; here the start flag gates it in the embedding).
  const Subspace value = c.program.layout().allocate_scalar("value at starts");
  const Subspace sum = c.program.layout().allocate_scalar("sum");
  for (int t = 1; t <= 60; t += block) c.program.embed_position(t, value[0], 3.0f);
  c.program.add(block_sum(c.features, block, {{value[0], 1.0f}}, sum[0], "sum", {}), "test");
  std::mt19937_64 rng(10);
  const Eigen::MatrixXd x = c.run(random_word(rng, 60));
  for (int t = 0; t <= 60; ++t) {
    const int starts = t == 0 ? 0 : (t - 1) / block + 1;
    CHECK(std::abs(x(t, sum[0]) - 3.0 * starts) < 1e-6);
  }
  (void)tokens;
}

TEST_CASE("primitives: a gated comb writes its lookup of (gate, count mod p) only when gated") {
  Chamber c(50);
  const Subspace tokens = c.features.tokens();
  const Subspace count = c.program.layout().allocate_scalar("count");
  c.program.add(prefix_sum(c.features, {{tokens[0], 1.0f}}, count[0], "count a", {}), "test");
  const Subspace out = c.program.layout().allocate_scalar("out");
  MlpOp mlp;
  mlp.name = "gated";
  // While the current letter is b: write 10 + (number of a's mod 3).
  const CombGate gate{{{tokens[1], 1.0f}}, 1, 52.0f};
  add_comb_units(
      mlp, {{{count[0], 1.0f}}, 50, c.features.one()[0]}, 3,
      [&](int r) {
        return Terms{{out[0], 10.0f + r}};
      },
      &gate);
  c.program.add(std::move(mlp), "test");
  std::mt19937_64 rng(11);
  const auto word = random_word(rng, 50);
  const Eigen::MatrixXd x = c.run(word);
  int a = 0;
  for (int t = 1; t <= 50; ++t) {
    if (word[t - 1] == 0) ++a;
    const double expected = word[t - 1] == 1 ? 10.0 + a % 3 : 0.0;
    CHECK(std::abs(x(t, out[0]) - expected) < 1e-5);
  }
}
