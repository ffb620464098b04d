// The parallel prefix and the pieces of its integer-coordinate form, each alone in a chamber
// (tests/backend/chamber.hpp) run by the plain dense forward pass, and checked against the
// transformations themselves: the phase fetch, the composition units, the one-hot units, their
// float32 magnitudes, the whole scan in each of its three forms, and binary coordinates (every
// value -1, 0 or 1) with the planner that chooses them by dense size.
#include "primitives/prefix_scan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "chamber.hpp"
#include "krc/automata/integer_math.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/runtime/forward.hpp"
#include "prepared_memory.hpp"
#include "primitives/attention_heads.hpp"
#include "primitives/integer_compose.hpp"
#include "test_support.hpp"

using namespace krc;
using test::Chamber;
using test::random_word;

namespace {

Transformation random_map(std::mt19937_64& rng, int n) {
  Transformation f(n);
  for (auto& v : f) v = static_cast<StateId>(rng() % n);
  return f;
}

}  // namespace

TEST_CASE("primitives: the position phase holds cos and sin of pi t / 2^b, exactly 0 and +-1") {
  Chamber c(40);
  const Subspace phase = c.features.position_phase();
  REQUIRE(phase.width == 2 * 6 - 1);  // 6 bits for 0..40; frequency 0 has no sine
  std::mt19937_64 rng(1);
  const Eigen::MatrixXd x = c.run(random_word(rng, 40));
  for (int t = 0; t <= 40; ++t) {
    CAPTURE(t);
    CHECK(x(t, phase[0]) == (t % 2 ? -1.0 : 1.0));
    for (int b = 1; b < 6; ++b) {
      const double angle = M_PI * t / std::pow(2.0, b);
      CHECK(std::abs(x(t, phase[2 * b - 1]) - std::cos(angle)) < 1e-7);
      CHECK(std::abs(x(t, phase[2 * b]) - std::sin(angle)) < 1e-7);
      if (t % (1 << (b - 1)) == 0) {  // multiples of pi/2: exact
        CHECK(std::abs(x(t, phase[2 * b - 1])) == std::round(std::abs(std::cos(angle))));
        CHECK(std::abs(x(t, phase[2 * b])) == std::round(std::abs(std::sin(angle))));
      }
    }
  }
}

TEST_CASE("primitives: a phase fetch copies the stream from max(t - k, 0), one code for every k") {
  for (int max_len : {40, 1024}) {
    CAPTURE(max_len);
    Chamber c(max_len);
    const Subspace tokens = c.features.tokens();
    std::vector<int> offsets{1, 2, 3, 5, 32};
    if (max_len == 1024) offsets = {1, 7, 512, 1000, 1024};
    std::vector<Subspace> dest;
    for (int k : offsets) {
      dest.push_back(c.program.layout().allocate("copy " + std::to_string(k), {"a", "b", "c"}));
      std::vector<Entry> copy;
      for (int a = 0; a < 3; ++a) copy.push_back({tokens[a], dest.back()[a], 1.0f});
      c.program.add(fetch_back_by_phase(c.features, k, copy, "fetch", {RoleKind::ScanFetch}),
                    "test");
    }
    // One phase code serves every offset.
    int phases = 0;
    for (const auto& s : c.program.layout().subspaces()) phases += s.name == "position phase";
    CHECK(phases == 1);
    std::mt19937_64 rng(max_len);
    const auto word = random_word(rng, max_len);
    for (auto attention : {AttentionKind::Softmax, AttentionKind::Hard}) {
      const Eigen::MatrixXd x = c.run(word, attention);
      for (std::size_t i = 0; i < offsets.size(); ++i)
        for (int t = 0; t <= max_len; ++t) {
          const int from = std::max(t - offsets[i], 0);
          for (int a = 0; a < 3; ++a) {
            const double expected =
                from > 0 && word[from - 1] == static_cast<LetterId>(a) ? 1.0 : 0.0;
            REQUIRE(std::abs(x(t, dest[i][a]) - expected) < 1e-9);
          }
        }
    }
  }
}

// Position t holds random maps f (x, earlier) and g (y, current) as f(q) + 1 and g(q) + 1, with
// errors: x off by up to 0.24 at even positions, y off by up to 0.01 at odd ones.
TEST_CASE("primitives: integer composition units leave g(f(q)) in place, flat in x within 1/4") {
  for (int n : {1, 2, 5, 12}) {
    CAPTURE(n);
    const int positions = 60;
    Chamber c(positions);
    const Subspace x = c.program.layout().allocate("x", std::vector<std::string>(n, "v"));
    const Subspace y = c.program.layout().allocate("y", std::vector<std::string>(n, "v"));
    std::mt19937_64 rng(n);
    std::uniform_real_distribution<double> x_noise(-0.24, 0.24), y_noise(-0.01, 0.01);
    std::vector<Transformation> f, g;
    std::vector<std::vector<double>> y_error(positions + 1, std::vector<double>(n, 0.0));
    for (int t = 0; t <= positions; ++t) {
      f.push_back(random_map(rng, n));
      g.push_back(random_map(rng, n));
      for (int q = 0; q < n; ++q) {
        if (t % 2 == 1) y_error[t][q] = y_noise(rng);
        c.program.embed_position(t, x[q], float(f[t][q] + 1 + (t % 2 ? 0.0 : x_noise(rng))));
        c.program.embed_position(t, y[q], float(g[t][q] + 1 + y_error[t][q]));
      }
    }
    MlpOp mlp;
    mlp.name = "compose";
    std::vector<int> all(n);
    for (int q = 0; q < n; ++q) all[q] = q;
    add_integer_compose_units(mlp, x, y, all);
    CHECK(mlp.units == 2 * n * n + n);
    c.program.add(std::move(mlp), "test");
    const Eigen::MatrixXd out = c.run(random_word(rng, positions));
    for (int t = 0; t <= positions; ++t)
      for (int q = 0; q < n; ++q) {
        CAPTURE(t);
        CAPTURE(q);
        // y's error at f(q) comes along (as stored in float32).
        const double expected = float(g[t][f[t][q]] + 1 + y_error[t][f[t][q]]);
        CHECK(std::abs(out(t, y[q]) - expected) < 1e-6);
      }
  }
}

TEST_CASE("primitives: integer one-hot units write the one-hot of g(x)") {
  for (int n : {1, 2, 5, 9}) {
    CAPTURE(n);
    const int positions = 50;
    Chamber c(positions);
    const Subspace x = c.program.layout().allocate_scalar("x");
    const Subspace y = c.program.layout().allocate("y", std::vector<std::string>(n, "v"));
    const Subspace out = c.program.layout().allocate("one-hot", std::vector<std::string>(n, "v"));
    std::mt19937_64 rng(10 + n);
    std::vector<int> xs;
    std::vector<Transformation> g;
    for (int t = 0; t <= positions; ++t) {
      xs.push_back(static_cast<int>(rng() % n));
      g.push_back(random_map(rng, n));
      c.program.embed_position(t, x[0], float(xs[t] + 1));
      for (int s = 0; s < n; ++s) c.program.embed_position(t, y[s], float(g[t][s] + 1));
    }
    MlpOp mlp;
    mlp.name = "one-hot";
    add_integer_one_hot_units(mlp, x[0], y, out);
    CHECK(mlp.units == 3 * n * n);
    c.program.add(std::move(mlp), "test");
    const Eigen::MatrixXd result = c.run(random_word(rng, positions));
    for (int t = 0; t <= positions; ++t)
      for (int v = 0; v < n; ++v)
        CHECK(std::abs(result(t, out[v]) - (static_cast<int>(g[t][xs[t]]) == v)) < 1e-9);
  }
}

namespace {

// Evaluates an MLP's units on the stream `x` unit by unit: for each output dimension, the
// terms w * ReLU(pre-activation) in unit order. Pre-activations in double or float32.
template <typename Real>
std::vector<std::vector<Real>> output_terms(const MlpOp& mlp, const std::vector<double>& x) {
  std::vector<Real> pre(mlp.bias.begin(), mlp.bias.end());
  for (const Entry& e : mlp.in) pre[e.row] += Real(e.value) * Real(x[e.col]);
  std::vector<std::vector<Real>> terms(x.size());
  for (const Entry& e : mlp.out)
    terms[e.row].push_back(Real(e.value) * std::max(Real(0), pre[e.col]));
  return terms;
}

// The units of integer_compose.hpp on a stream of x, y (values 1..n) and the one-hot output.
struct ComposeStream {
  explicit ComposeStream(int n) {
    x = layout.allocate("x", std::vector<std::string>(n, "v"));
    y = layout.allocate("y", std::vector<std::string>(n, "v"));
    out = layout.allocate("out", std::vector<std::string>(n, "v"));
    std::vector<int> all(n);
    for (int q = 0; q < n; ++q) all[q] = q;
    add_integer_compose_units(compose, x, y, all);
    add_integer_one_hot_units(one_hot, x[0], y, out);
  }
  ResidualLayout layout;
  Subspace x, y, out;
  MlpOp compose, one_hot;
};

double magnitude(const std::vector<double>& terms, double old) {
  double sum = std::abs(old);
  for (double t : terms) sum += std::abs(t);
  return sum;
}

}  // namespace

TEST_CASE("primitives: integer units' sums stay within their bound, exact in float32 at 202") {
  std::mt19937_64 rng(4);
  for (int n : {2, 3, 4, 7}) {
    CAPTURE(n);
    ComposeStream s(n);
    double compose_max = 0, one_hot_max = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<double> x(s.layout.width(), 0.0);
      const bool worst = trial == 0;
      for (int q = 0; q < n; ++q) {
        x[s.x[q]] = worst ? 1 : double(1 + rng() % n);  // the bound's worst case: x = 1, y = n
        x[s.y[q]] = worst ? n : double(1 + rng() % n);
      }
      const auto compose = output_terms<double>(s.compose, x);
      const auto one_hot = output_terms<double>(s.one_hot, x);
      for (int q = 0; q < n; ++q) {
        compose_max = std::max(compose_max, magnitude(compose[s.y[q]], x[s.y[q]]));
        one_hot_max = std::max(one_hot_max, magnitude(one_hot[s.out[q]], 0.0));
      }
    }
    CHECK(compose_max == integer_compose_magnitude(n));  // reached at the worst input
    CHECK(one_hot_max == integer_one_hot_magnitude(n));
  }
  // At 202 states, the worst input summed in float32 in three orders gives the exact values.
  const int n = 202;
  REQUIRE(integer_coordinates_exact_any_order(n));
  ComposeStream s(n);
  std::vector<double> x(s.layout.width(), 0.0);
  for (int q = 0; q < n; ++q) {
    x[s.x[q]] = 1;
    x[s.y[q]] = n;
  }
  const auto compose = output_terms<float>(s.compose, x);
  const auto one_hot = output_terms<float>(s.one_hot, x);
  auto sums = [](std::vector<float> terms, float start) {
    std::vector<float> results;
    for (int order = 0; order < 3; ++order) {
      if (order == 1) std::reverse(terms.begin(), terms.end());
      if (order == 2) std::sort(terms.begin(), terms.end(), [](float a, float b) { return a > b; });
      float sum = start;
      for (float t : terms) sum += t;
      results.push_back(sum);
    }
    return results;
  };
  for (int q = 0; q < n; ++q) {
    for (float r : sums(compose[s.y[q]], float(n))) REQUIRE(r == float(n));  // y_1 = n
    for (float r : sums(one_hot[s.out[q]], 0.0f)) REQUIRE(r == (q == n - 1 ? 1.0f : 0.0f));
  }
}

// The planner's bound in unit order: integer_compose_run_test.cpp.

namespace {

// A scan over X = {0, 1, 2} with the symbols a, b, c in the chosen form, against the symbols
// applied one by one: result() where it is a categorical, and the unembedding's argmax (by a
// margin of at least 1) always. The widest compose MLP must be the plan's.
void check_prefix_scan(const PrefixScanSpec& spec, const ScanChoice& choice) {
  Chamber c(40, spec.set_labels);
  PrefixScan scan(c.features, spec, choice);
  for (auto [dim, w] : scan.identity_terms()) c.program.embed_token(0, dim, w);
  for (int s = 0; s < 3; ++s)
    for (auto [dim, w] : scan.symbol_terms(s)) c.program.embed_token(s + 1, dim, w);
  scan.build("scan");
  const bool categorical = choice.plan.form != ScanForm::IntegerCoordinates || spec.one_hot_result;
  const Categorical state = categorical ? scan.result() : Categorical{};
  scan.unembed(c.program);
  const Network net = c.network();
  int widest = 0;
  for (const auto& layer : net.layers)
    widest = std::max(widest, layer.mlp ? layer.mlp->hidden() : 0);
  if (choice.plan.units > 0) CHECK(widest == choice.plan.units);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 3; ++trial) {
    const auto word = random_word(rng, 40);
    const Eigen::MatrixXd x = test::naive_residual(net, word);
    const Eigen::MatrixXd logits = test::naive_logits(net, word);
    StateId q = spec.initial;
    for (int t = 0; t <= 40; ++t) {
      CAPTURE(t);
      if (t > 0) q = spec.symbols[word[t - 1]][q];
      for (int v = 0; v < 3; ++v) {
        if (v != static_cast<int>(q)) CHECK(logits(t, q) - logits(t, v) > 1 - 1e-6);
        if (!categorical) continue;
        double indicator = 0;
        for (auto [dim, w] : state.indicator[v]) indicator += w * x(t, dim);
        CHECK(std::abs(indicator - (v == static_cast<int>(q))) < 1e-6);
      }
    }
  }
}

PrefixScanSpec three_symbols(Transformation a, Transformation b, Transformation c) {
  PrefixScanSpec spec;
  spec.name = "scan";
  spec.set_labels = {"0", "1", "2"};
  spec.symbol_labels = {"a", "b", "c"};
  spec.symbols = {std::move(a), std::move(b), std::move(c)};
  spec.initial = 1;
  return spec;
}

}  // namespace

TEST_CASE("primitives: a prefix scan computes the state of its set in each of its three forms") {
  // Z3 (a, b rotate by 1 and 2, c fixes): 3 elements, 3^2 + 3 units <= 2 * 3^2 + 2 * 3, so the
  // element form. T3 (rotate, swap, reset to 2): 27 elements, so integer coordinates, 24 units
  // a step (27 as a one-hot at the last step) against the state maps' 45.
  PrefixScanSpec z3 = three_symbols({1, 2, 0}, {2, 0, 1}, {0, 1, 2});
  PrefixScanSpec t3 = three_symbols({1, 2, 0}, {1, 0, 2}, {2, 2, 2});
  for (bool one_hot : {false, true}) {
    CAPTURE(one_hot);
    z3.one_hot_result = t3.one_hot_result = one_hot;
    const ScanChoice element = plan_prefix_scan(z3, 40);
    CHECK(element.plan.steps == 6);
    CHECK(element.plan.form == ScanForm::ElementOneHot);
    CHECK(element.plan.monoid_size == 3u);
    check_prefix_scan(z3, element);
    const ScanChoice integer = plan_prefix_scan(t3, 40);
    CHECK(integer.plan.form == ScanForm::IntegerCoordinates);
    CHECK(integer.plan.units == (one_hot ? 27 : 24));
    check_prefix_scan(t3, integer);
    // The other forms, forced: the state maps for T3, integer coordinates for Z3.
    ScanChoice state_map;
    state_map.plan = {ScanForm::StateMapOneHot, 3, 0, 6, 45};
    check_prefix_scan(t3, state_map);
    ScanChoice forced = integer;
    check_prefix_scan(z3, forced);
  }
}

namespace {

// A scan over n states with the symbols a, b, c drawn at random, initial state n / 2, and
// binary coordinates allowed (what --precision bf16|fp16 plans with).
PrefixScanSpec random_binary_spec(std::mt19937_64& rng, int n) {
  PrefixScanSpec spec;
  spec.name = "scan";
  for (int q = 0; q < n; ++q) spec.set_labels.push_back(std::to_string(q));
  spec.symbol_labels = {"a", "b", "c"};
  for (int s = 0; s < 3; ++s) spec.symbols.push_back(random_map(rng, n));
  spec.initial = static_cast<StateId>(n / 2);
  spec.binary_form = true;
  return spec;
}

// The whole network of a scan over the symbols a, b, c in `choice`'s form: embeddings, steps,
// unembedding. `scan`, when given, receives the PrefixScan (alive until the next call).
Network scan_network(const PrefixScanSpec& spec, const ScanChoice& choice, int max_len,
                     PrefixScan** scan = nullptr) {
  static std::unique_ptr<Chamber> c;
  static std::unique_ptr<PrefixScan> built;
  built.reset();
  c = std::make_unique<Chamber>(max_len, spec.set_labels);
  built = std::make_unique<PrefixScan>(c->features, spec, choice);
  for (auto [dim, w] : built->identity_terms()) c->program.embed_token(0, dim, w);
  for (int s = 0; s < 3; ++s)
    for (auto [dim, w] : built->symbol_terms(s)) c->program.embed_token(s + 1, dim, w);
  built->build("scan");
  built->unembed(c->program);
  if (scan) *scan = built.get();
  return c->network();
}

}  // namespace

// compiler/README.md "binary coordinates": bit i of f(q) as -1 or +1, so that every value the
// residual stream holds, at every position of every word, is -1, 0 or 1 (the exactness argument
// in bf16 and fp16 rests on it), the logit of the automaton's state is b and every other at
// most b - 2, and the width is Theorem 1's up to the factor b.
TEST_CASE(
    "primitives: a binary-coordinate scan holds only -1, 0 and 1 and decodes by a margin of 2") {
  std::mt19937_64 rng(11);
  for (int n : {1, 2, 3, 4, 5, 8, 9, 13, 17}) {
    CAPTURE(n);
    const PrefixScanSpec spec = random_binary_spec(rng, n);
    const int b = std::max(1, ceil_log2(n)), steps = 6;  // max-len 40
    ScanChoice choice;
    choice.plan = {ScanForm::BinaryCoordinates, n, 0, steps, (n * n + 2 * n) * b + 1};
    PrefixScan* built_scan = nullptr;
    const Network net = scan_network(spec, choice, 40, &built_scan);
    int widest = 0;
    for (const auto& layer : net.layers)
      widest = std::max(widest, layer.mlp ? layer.mlp->hidden() : 0);
    CHECK(widest == choice.plan.units);
    if (n >= 2) CHECK(widest <= 2 * n * n * b + 1);  // issue 31: 2 n^2 b, and the constant unit
    // The prefix and its fetched copy (n b each), position codes (6 bits, for t and for t - k
    // at each of the 6 steps) and the constant feature.
    CHECK(net.d_model() <= 2 * n * b + 6 * (steps + 1) + 2);
    CHECK_THROWS_AS(built_scan->result(), std::logic_error);  // no one-hot to read
    for (int trial = 0; trial < 4; ++trial) {
      const auto word = random_word(rng, 40);
      const Eigen::MatrixXd x = test::naive_residual(net, word);
      const Eigen::MatrixXd logits = test::naive_logits(net, word);
      for (Eigen::Index i = 0; i < x.size(); ++i) {
        const double v = x.data()[i];
        REQUIRE((v == -1.0 || v == 0.0 || v == 1.0));
      }
      StateId q = spec.initial;
      for (int t = 0; t <= 40; ++t) {
        CAPTURE(t);
        if (t > 0) q = spec.symbols[word[t - 1]][q];
        CHECK(logits(t, q) == b);
        for (int v = 0; v < n; ++v)
          if (v != static_cast<int>(q)) CHECK(logits(t, v) <= b - 2);
      }
    }
  }
}

// The digit form (issue 31: fewer units than binary coordinates in bf16 and fp16): the bits, and
// f(q) as digits of base B (here 4, so that small n have several digits, and 256 and 2048).
// Every residual value at every position is an integer: bits in {-1, 0, 1}, digits in [0, B).
// The logits decode by a margin of 2 as in the binary form, in float64 and in krc's bf16 and
// fp16 arithmetics (every stored tensor rounded to the format), and the compose MLPs have n^2 r
// units where binary coordinates have n^2 b.
TEST_CASE("primitives: a digit-coordinate scan holds small integers, right in bf16 and fp16") {
  std::mt19937_64 rng(12);
  // 40 states cost 15 minutes under the sanitizers (28 s of the whole case in Release): the
  // sanitized lane stops at 17, where every base still has several digits.
  std::vector<int> sizes = {1, 2, 3, 5, 8, 9, 17};
  if (!test::sanitized_build()) sizes.push_back(40);
  const int trials = test::sanitized_build() ? 1 : 3;
  for (int base : {4, 256, 2048})
    for (int n : sizes) {
      CAPTURE(base);
      CAPTURE(n);
      PrefixScanSpec spec = random_binary_spec(rng, n);
      spec.max_digit_base = base;
      const int b = std::max(1, ceil_log2(n)), steps = 6;  // max-len 40
      int per_digit = 1;
      while ((2 << per_digit) <= base) ++per_digit;
      const int r = (b + per_digit - 1) / per_digit;
      ScanChoice choice;
      choice.plan = {ScanForm::DigitCoordinates, n, 0, steps, n * n * r};
      const Network net = scan_network(spec, choice, 40);
      CHECK(net.layers.size() == static_cast<std::size_t>(2 * steps - 1));
      int compose_units = 0;
      for (const auto& layer : net.layers)
        if (layer.mlp) compose_units = std::max(compose_units, layer.mlp->hidden());
      // The compose MLP (n^2 r, the old digits, the fetched bits and a constant) or the
      // conversion (at most n r B, and the old bits).
      CHECK(compose_units <=
            std::max(n * n * r + n * r + n * b + 1, n * r * (1 << per_digit) + n * b));
      for (int trial = 0; trial < trials; ++trial) {
        const auto word = random_word(rng, 40);
        const Eigen::MatrixXd x = test::naive_residual(net, word);
        for (Eigen::Index i = 0; i < x.size(); ++i) {
          const double v = x.data()[i];
          REQUIRE(v == std::round(v));
          REQUIRE(std::abs(v) < std::max(base, 64));  // digits, bits, position codes
        }
        const Eigen::MatrixXd logits = test::naive_logits(net, word);
        const Eigen::MatrixXd bf16 =
            ForwardPass(net, {AttentionKind::Softmax, Arithmetic::BFloat16, 1}).run(word);
        const Eigen::MatrixXd fp16 =
            ForwardPass(net, {AttentionKind::Softmax, Arithmetic::Float16, 1}).run(word);
        StateId q = spec.initial;
        for (int t = 0; t <= 40; ++t) {
          CAPTURE(t);
          if (t > 0) q = spec.symbols[word[t - 1]][q];
          CHECK(logits(t, q) == b);
          for (const Eigen::MatrixXd* m : {&bf16, &fp16}) CHECK((*m)(t, q) == b);
          for (int v = 0; v < n; ++v)
            if (v != static_cast<int>(q)) {
              CHECK(logits(t, v) <= b - 2);
              if (base <= 256) CHECK(bf16(t, v) <= b - 2);
              CHECK(fp16(t, v) <= b - 2);
            }
        }
      }
    }
}

// The memory budget's model of the forward pass bounds what preparing a digit network holds
// (tests/runtime/network_memory_test.cpp has the other forms): the form a 657-state model
// takes in bf16, whose prepared copies decide the largest model the default budget reads.
TEST_CASE("primitives: a digit-coordinate scan's prepared copies are within the memory model") {
  if (test::sanitized_build()) return;  // AddressSanitizer's allocator keeps its own counts
  std::mt19937_64 rng(14);
  for (int n : {17, 40, 90}) {
    CAPTURE(n);
    PrefixScanSpec spec = random_binary_spec(rng, n);
    const int b = ceil_log2(n), steps = 8;  // max-len 256
    const int r = (b + 7) / 8;              // digits of up to 8 bits (base 256, bf16)
    ScanChoice choice;
    choice.plan = {ScanForm::DigitCoordinates, n, 0, steps, n * n * r};
    test::check_prepared_within_model(scan_network(spec, choice, 256));
  }
}

// Under binary_form the planner compares dense sizes: a small monoid keeps the element form,
// random maps of 24 and 48 states take binary coordinates, whose dense size is below the state
// maps' (and within issue 31's bounds); without binary_form nothing changes.
TEST_CASE("planner: binary coordinates where they are the least dense, never without binary_form") {
  PrefixScanSpec z3 = three_symbols({1, 2, 0}, {2, 0, 1}, {0, 1, 2});
  z3.binary_form = true;
  z3.integer_form = false;
  CHECK(plan_prefix_scan(z3, 1024).plan.form == ScanForm::ElementOneHot);
  std::mt19937_64 rng(5);
  for (int n : {24, 48}) {
    CAPTURE(n);
    PrefixScanSpec spec = random_binary_spec(rng, n);
    spec.integer_form = false;
    const ScanChoice narrow = plan_prefix_scan(spec, 1024);
    const int b = std::max(1, ceil_log2(n));
    CHECK(narrow.plan.form == ScanForm::BinaryCoordinates);
    CHECK(narrow.plan.steps == 10);
    CHECK(narrow.plan.units == (n * n + 2 * n) * b + 1);
    // The estimate against the networks themselves, built in both forms.
    long long built[2] = {0, 0};
    for (ScanForm form : {ScanForm::BinaryCoordinates, ScanForm::StateMapOneHot}) {
      ScanChoice choice = narrow;
      choice.plan.form = form;
      built[form == ScanForm::StateMapOneHot] = scan_network(spec, choice, 1024).size().parameters;
    }
    CHECK(built[0] < built[1]);
    DenseScanShape shape{double(n * b), {}, 1024, 4, n, 1};
    shape.steps.assign(10, {double(n * b), double((n * n + 2 * n) * b + 1)});
    shape.steps.back() = {double(b), double((n + 1) * b)};
    const double estimate = dense_scan_parameters(shape);
    CHECK(estimate == double(built[0]));  // what Network::size() counts, to the parameter
    spec.binary_form = false;
    CHECK(plan_prefix_scan(spec, 1024).plan.form == ScanForm::StateMapOneHot);
    spec.integer_form = true;
    CHECK(plan_prefix_scan(spec, 1024).plan.form == ScanForm::IntegerCoordinates);
  }
}

// Issue 31: where binary coordinates are over the unit limit (or the memory budget), the
// planner takes digit coordinates, n^2 r product units a step; the network it plans is right
// in krc's bf16 arithmetic on random words (the automaton is the oracle), and under a limit
// below both forms the planner refuses.
TEST_CASE("planner: digit coordinates where binary coordinates are over the limit") {
  std::mt19937_64 rng(31);
  for (int n : {24, 40}) {
    CAPTURE(n);
    PrefixScanSpec spec = random_binary_spec(rng, n);
    spec.integer_form = false;
    const int b = std::max(1, ceil_log2(n));
    const long long binary = (n * n + 2 * n) * b + 1;
    REQUIRE(plan_prefix_scan(spec, 256).plan.form == ScanForm::BinaryCoordinates);
    spec.max_units_per_step = static_cast<std::size_t>(binary - 1);
    const ScanChoice digits = plan_prefix_scan(spec, 256);
    REQUIRE(digits.plan.form == ScanForm::DigitCoordinates);
    // One digit of b bits (B = 2^b <= 256): compose n^2 + n + nb + 1, conversion <= nB + nb.
    CHECK(digits.plan.units == std::max<long long>(n * n + n + n * b + 1, n * (1 << b) + n * b));
    const Network net = scan_network(spec, digits, 256);
    CHECK(net.layers.size() == 2 * 8 - 1);
    for (const auto& layer : net.layers)
      if (layer.mlp) CHECK(layer.mlp->hidden() <= digits.plan.units);
    const ForwardPass bf16(net, {AttentionKind::Softmax, Arithmetic::BFloat16, 1});
    for (int trial = 0; trial < 2; ++trial) {
      const auto word = random_word(rng, 256);
      const Eigen::MatrixXd logits = bf16.run(word);
      StateId q = spec.initial;
      for (int t = 0; t <= 256; ++t) {
        if (t > 0) q = spec.symbols[word[t - 1]][q];
        Eigen::Index best = 0;
        logits.row(t).maxCoeff(&best);
        CHECK(best == static_cast<Eigen::Index>(q));
        CHECK(logits(t, q) == b);
      }
    }
    spec.max_units_per_step = static_cast<std::size_t>(n * n);
    CHECK_THROWS_AS(plan_prefix_scan(spec, 256), LimitError);
  }
}

namespace {

// The parameters of the scan network `choice` builds for `spec` at max-len 64.
long long built_parameters(const PrefixScanSpec& spec, const ScanChoice& choice) {
  return scan_network(spec, choice, 64).size().parameters;
}

}  // namespace

// Issue 31, item 2: under bf16 and fp16 the planner takes the least dense exact form. Each
// candidate is built (the element form where the float32 planner enumerates the monoid, the
// state maps and binary coordinates always) and the chosen one must be the smallest.
TEST_CASE("planner: under binary_form the chosen form is the least dense of those built") {
  std::mt19937_64 rng(9);
  std::vector<PrefixScanSpec> specs{
      three_symbols({0, 1, 2}, {0, 0, 0}, {1, 1, 1}),  // a flip-flop and a read: 3 elements
      three_symbols({1, 2, 0}, {2, 0, 1}, {0, 1, 2}),  // Z3
      three_symbols({1, 2, 0}, {1, 0, 2}, {2, 2, 2}),  // T3: 27 elements
  };
  for (int n : {4, 6, 9}) specs.push_back(random_binary_spec(rng, n));
  for (PrefixScanSpec spec : specs) {
    CAPTURE(spec.set_labels.size());
    spec.integer_form = false;
    spec.binary_form = true;
    const ScanChoice chosen = plan_prefix_scan(spec, 64);
    CAPTURE(to_string(chosen.plan.form));
    const long long size = built_parameters(spec, chosen);
    ScanChoice other = chosen;
    for (ScanForm form : {ScanForm::StateMapOneHot, ScanForm::BinaryCoordinates}) {
      other.plan.form = form;
      other.monoid.reset();
      CHECK(size <= built_parameters(spec, other));
    }
    PrefixScanSpec wide = spec;
    wide.binary_form = false;
    const ScanChoice element = plan_prefix_scan(wide, 64);
    if (element.plan.form == ScanForm::ElementOneHot)
      CHECK(size <= built_parameters(spec, element));
  }
}

TEST_CASE("primitives: the element form's table is held to the memory budget") {
  // S6 acting on the first 6 of 400 states (the rest fixed): 720 elements, within the
  // enumeration's limit (the state maps' 400^3 + 2 * 400^2 units allow ~8,000 elements), but its
  // product table is 720^2 integers (2 MB) and its elements 720 x 400 states (1.15 MB). Under a
  // 2 MiB budget it is not taken, and the planner falls back to the state maps instead of
  // allocating it (a 10,000-state prefix-tree acceptor's table asked 40 GB that way).
  PrefixScanSpec spec;
  spec.name = "scan";
  const int n = 400;
  for (int q = 0; q < n; ++q) spec.set_labels.push_back(std::to_string(q));
  spec.symbol_labels = {"swap", "cycle"};
  Transformation swap(n), cycle(n);
  for (int q = 0; q < n; ++q) swap[q] = cycle[q] = static_cast<StateId>(q);
  std::swap(swap[0], swap[1]);
  for (int q = 0; q < 6; ++q) cycle[q] = static_cast<StateId>((q + 1) % 6);
  spec.symbols = {swap, cycle};
  spec.integer_form = false;
  spec.max_units_per_step = 100'000'000;
  const ScanChoice roomy = plan_prefix_scan(spec, 64);
  CHECK(roomy.plan.form == ScanForm::ElementOneHot);
  CHECK(roomy.plan.monoid_size == 720u);
  const std::uint64_t previous = memory_budget();
  set_memory_budget(2u << 20);
  ScanChoice tight;
  CHECK_NOTHROW(tight = plan_prefix_scan(spec, 64));
  set_memory_budget(previous);
  CHECK(tight.plan.form == ScanForm::StateMapOneHot);
  CHECK(tight.plan.units == 400LL * 400 * 400 + 2 * 400 * 400);
}
