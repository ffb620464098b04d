// The integer clamp-pair MLP (integer_clamp_mlp.hpp): the float32 sums of the dense formula
// bit for bit, against term-by-term float32 loops written here and the test support's dense
// float32 forward pass (float32_forward.hpp), on hand-built MLPs (rows of integers, rows that
// must go the general way) and on compiled integer-scan networks, whose compose steps take
// the clamp path.
#include "forward/integer_clamp_mlp.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "f32_kernel_run.hpp"
#include "float32_forward.hpp"
#include "forward/float32_kernels.hpp"
#include "forward/prepared_network.hpp"
#include "krc/backend/compile.hpp"
#include "random_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// out[o] = sum_u W2[o, u] ReLU(W1[u] . x + b1[u]) as a plain float32 framework sums it: each
// pre-activation over the inputs in order plus the bias, each output over the units in order.
std::vector<float> dense_mlp(const Mlp& mlp, const std::vector<float>& x) {
  std::vector<float> h(mlp.hidden()), out(x.size(), 0.0f);
  for (int u = 0; u < mlp.hidden(); ++u) {
    float a = 0.0f;
    for (SparseMatrix::InnerIterator it(mlp.in_weight, u); it; ++it) a += it.value() * x[it.col()];
    h[u] = std::max(a + mlp.in_bias[u], 0.0f);
  }
  for (std::size_t o = 0; o < x.size(); ++o)
    for (SparseMatrix::InnerIterator it(mlp.out_weight, static_cast<int>(o)); it; ++it)
      out[o] += it.value() * h[it.col()];
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The compose step of the integer scan written out by hand (integer_compose.hpp), for n
// coordinates: dims [0, n) hold x (fetched), [n, 2n) hold y; for each q, pairs (u1(s), u2(s))
// of y_s - K x_q and the single u3, all writing y_q. `shuffle_signs` flips the order inside
// some pairs (the smaller bias first), which the form allows too.
Mlp compose_mlp(int n, bool shuffle_signs) {
  const float k = 4.0f * static_cast<float>((n + 1) / 2);
  const int hidden = n * (2 * n + 1), d = 2 * n;
  std::vector<Eigen::Triplet<float>> in, out;
  Eigen::VectorXf bias(hidden);
  int u = 0;
  for (int q = 0; q < n; ++q) {
    for (int s = 1; s <= n; ++s) {
      const bool flip = shuffle_signs && (q + s) % 3 == 0;
      for (int half = 0; half < 2; ++half) {
        const bool upper = (half == 0) != flip;
        in.emplace_back(u, q, -k);
        in.emplace_back(u, n + s - 1, 1.0f);
        bias[u] = k * static_cast<float>(s) + (upper ? k / 4 : -3 * k / 4);
        out.emplace_back(n + q, u, upper ? 1.0f : -1.0f);
        ++u;
      }
    }
    in.emplace_back(u, q, -k);
    in.emplace_back(u, n + q, 1.0f);
    bias[u] = k * (static_cast<float>(n) + 0.25f);
    out.emplace_back(n + q, u++, -1.0f);
  }
  Mlp mlp;
  mlp.in_weight = SparseMatrix(hidden, d);
  mlp.in_weight.setFromTriplets(in.begin(), in.end());
  mlp.out_weight = SparseMatrix(d, hidden);
  mlp.out_weight.setFromTriplets(out.begin(), out.end());
  mlp.in_bias = bias;
  mlp.out_bias = Eigen::VectorXf::Zero(d);
  return mlp;
}

}  // namespace

TEST_CASE("integer clamp pairs: a compose step's rows of integers give the dense float32 sums") {
  std::mt19937_64 rng(2301);
  for (int n : {3, 8, 41}) {
    for (bool shuffle : {false, true}) {
      CAPTURE(n);
      const Mlp mlp = compose_mlp(n, shuffle);
      const PreparedMlp prepared = prepare_mlp(mlp);
      REQUIRE(prepared.integer_clamps.has_value());
      const IntegerClampMlp& form = *prepared.integer_clamps;
      std::uniform_int_distribution<int> coordinate(1, n), wide(-3 * n, 3 * n);
      for (int trial = 0; trial < 200; ++trial) {
        std::vector<float> x(2 * n);
        for (float& v : x) v = static_cast<float>(trial % 4 == 3 ? wide(rng) : coordinate(rng));
        std::vector<float> out(2 * n, 0.0f);
        REQUIRE(form.evaluate(prepared, x.data(), out.data()));
        const std::vector<float> dense = dense_mlp(mlp, x);
        CHECK(same_bits(out, dense));
        // On coordinates 1..n it composes: y_q + out[q] = y_{x_q}.
        if (trial % 4 != 3)
          for (int q = 0; q < n; ++q)
            CHECK(x[n + q] + out[n + q] == x[n + static_cast<int>(x[q]) - 1]);
      }
    }
  }
}

TEST_CASE("integer clamp pairs: rows that are not integers, or too large, go the general way") {
  const Mlp mlp = compose_mlp(8, false);
  const PreparedMlp prepared = prepare_mlp(mlp);
  REQUIRE(prepared.integer_clamps.has_value());
  const IntegerClampMlp& form = *prepared.integer_clamps;
  // K = 8: the bound alpha M + beta <= 2^24 holds far beyond n, but not at 2^24 itself.
  CHECK(form.largest_input() >= 1000.0);
  CHECK(form.largest_input() < 16777216.0);
  std::vector<float> x(16, 2.0f), out(16, 7.0f);
  x[5] = 2.5f;  // a softmax trace would look like this, far smaller
  CHECK_FALSE(form.evaluate(prepared, x.data(), out.data()));
  x[5] = static_cast<float>(form.largest_input()) + 1.0f;
  CHECK_FALSE(form.evaluate(prepared, x.data(), out.data()));
  CHECK(out == std::vector<float>(16, 7.0f));  // untouched
  // And the whole kernel still gives the dense sums on such a row.
  kernels::Activations<float> rows(1, 16);
  x[5] = 2.0f + 0x1p-20f;
  for (int c = 0; c < 16; ++c) rows(0, c) = x[c];
  kernels::f32::MlpScratch scratch;
  kernels::f32::apply_mlp(prepared, rows, 0, 1, scratch);
  CHECK(scratch.clamp_rows == 0);
  const std::vector<float> dense = dense_mlp(mlp, x);
  for (int c = 0; c < 16; ++c) CHECK(rows(0, c) == x[c] + dense[c]);
}

TEST_CASE(
    "integer clamp pairs: an MLP with a non-integer weight or a unit of two outputs is not of the "
    "form") {
  Mlp mlp = compose_mlp(4, false);
  mlp.in_bias[3] += 0.5f;
  CHECK_FALSE(prepare_mlp(mlp).integer_clamps.has_value());
  mlp = compose_mlp(4, false);
  mlp.out_weight.coeffRef(0, 5) = 1.0f;  // unit 5 now writes dims 0 and 4
  CHECK_FALSE(prepare_mlp(mlp).integer_clamps.has_value());
}

TEST_CASE("integer clamp pairs: integer-scan networks equal the dense float32 pass bit for bit") {
  std::mt19937_64 rng(2302);
  for (const char* name : {"full_transformations_3", "gridworld_4", "abab", "gridworld_9"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    CompileOptions options;
    options.strategy = Strategy::Scan;
    options.max_len = 80;
    const Network net = compile(a, options).network;
    const PreparedNetwork prepared(net);
    int forms = 0;
    for (const auto& layer : prepared.layers) forms += layer.mlp && layer.mlp->integer_clamps;
    CHECK(forms >= 5);  // every compose step but the last
    const int letters = static_cast<int>(a.letter_count());
    for (const auto& word :
         {test::random_word(rng, letters, 80), test::random_word(rng, letters, 37)}) {
      const int n = static_cast<int>(word.size()) + 1;
      const test::F32KernelRun run = test::run_f32_kernels(net, prepared, word);
      CHECK(run.mlp.clamp_rows >= static_cast<long long>(n) * 5);
      const RowMatrix dense = test::float32_residual(net, word);
      long long differing = 0;
      for (int t = 0; t < n; ++t)
        for (int c = 0; c < net.d_model(); ++c) {
          const float fast = run.x(t, c), oracle = dense(t, c);
          differing += std::memcmp(&fast, &oracle, sizeof fast) != 0;
        }
      CHECK(differing == 0);
    }
  }
}
