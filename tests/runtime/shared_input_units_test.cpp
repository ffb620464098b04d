// Units that read one linear form z of the row are evaluated as z * A + B from prefix sums
// over their thresholds (shared_input_units.hpp). Oracle: the dense formula
// x + W2 ReLU(W1 x + b1) + b2, unit by unit, in double.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "forward/forward_kernels.hpp"
#include "forward/prepared_network.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "naive_forward.hpp"
#include "random_network.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// The dense formula for one row, and the size of the terms it sums per output (for a
// tolerance that scales with what float64 rounding can lose).
struct DenseRow {
  Eigen::VectorXd value, magnitude;
};
DenseRow dense_mlp(const Mlp& mlp, const Eigen::VectorXd& x) {
  const SparseMatrix& w1 = mlp.in_weight;
  const Eigen::SparseMatrix<float> w2 = mlp.out_weight;  // column u: unit u's output weights
  DenseRow r{x, x.cwiseAbs()};
  r.value += mlp.out_bias.cast<double>();
  r.magnitude += mlp.out_bias.cast<double>().cwiseAbs();
  for (int u = 0; u < w1.rows(); ++u) {
    double pre = mlp.in_bias[u], size = std::abs(mlp.in_bias[u]);
    for (SparseMatrix::InnerIterator it(w1, u); it; ++it) {
      pre += static_cast<double>(it.value()) * x[it.col()];
      size += std::abs(static_cast<double>(it.value()) * x[it.col()]);
    }
    if (pre <= 0.0) continue;
    for (Eigen::SparseMatrix<float>::InnerIterator it(w2, u); it; ++it) {
      r.value[it.row()] += static_cast<double>(it.value()) * pre;
      r.magnitude[it.row()] += std::abs(static_cast<double>(it.value())) * size;
    }
  }
  return r;
}

// A factor whose reciprocal is exact, so that thresholds -b/a are exact floats and inputs
// can sit exactly on them.
float exact_factor(std::mt19937_64& rng) {
  const float magnitudes[] = {1.0f, 0.5f, 2.0f, 4.0f, 0.25f};
  return (rng() % 2 ? 1.0f : -1.0f) * magnitudes[rng() % 5];
}

struct SharedGroupMlp {
  Mlp mlp;
  std::vector<std::vector<int>> groups;                  // the units built to share a form
  std::vector<std::vector<std::pair<int, float>>> form;  // each group's direction
  std::vector<int> too_few;                              // units of a form too rare to share
};

// Random general units plus `group_count` groups of units a_u (direction . x) + b_u: some
// on one dim, some on two or three dims, factors of both signs, thresholds random, repeated
// or at 0, biases of both signs; and a group too small to be shared.
SharedGroupMlp random_shared_mlp(std::mt19937_64& rng, int d, int group_count) {
  SharedGroupMlp g;
  std::vector<Eigen::Triplet<float, int>> in, out;
  int units = 0;
  const int general = std::uniform_int_distribution<int>(0, 20)(rng);
  SparseMatrix random_in = test::random_sparse(rng, general, d, 0.4);
  for (int u = 0; u < random_in.outerSize(); ++u)
    for (SparseMatrix::InnerIterator it(random_in, u); it; ++it)
      in.emplace_back(u, it.col(), it.value());
  std::vector<float> bias;
  for (int u = 0; u < general; ++u)
    bias.push_back(std::uniform_real_distribution<float>(-1.0f, 0.5f)(rng));
  units = general;
  for (int k = 0; k <= group_count; ++k) {
    const bool small = k == group_count;  // below PreparedMlp::kMinShared
    const int members = small ? static_cast<int>(PreparedMlp::kMinShared) - 1
                              : std::uniform_int_distribution<int>(8, 80)(rng);
    std::vector<std::pair<int, float>> direction;
    std::vector<int> dims(d);
    for (int c = 0; c < d; ++c) dims[c] = c;
    std::shuffle(dims.begin(), dims.end(), rng);
    // The small group's form has a coefficient 3 that no other group's has.
    const int width = small ? 2 : rng() % 3 == 0 ? std::min(d, 1 + static_cast<int>(rng() % 3)) : 1;
    std::sort(dims.begin(), dims.begin() + width);
    for (int i = 0; i < width; ++i)
      direction.emplace_back(dims[i], i == 0 ? 1.0f : small ? 3.0f : exact_factor(rng));
    std::vector<int> members_of;
    for (int m = 0; m < members; ++m) {
      const int u = units++;
      members_of.push_back(u);
      const float a = exact_factor(rng);
      for (const auto& [c, coefficient] : direction) in.emplace_back(u, c, a * coefficient);
      switch (rng() % 5) {
        case 0:
          bias.push_back(0.0f);
          break;
        case 1:
          bias.push_back(0.25f * static_cast<float>(rng() % 9));
          break;  // positive: active at z = 0
        case 2:
          bias.push_back(-0.5f * static_cast<float>(m / 3));
          break;  // repeated thresholds
        default:
          bias.push_back(std::uniform_real_distribution<float>(-8.0f, 1.0f)(rng));
      }
      const int outputs = 1 + static_cast<int>(rng() % 3);
      for (int o = 0; o < outputs; ++o)
        out.emplace_back(static_cast<int>(rng() % d), u,
                         std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng));
    }
    if (small) {
      g.too_few = members_of;
    } else {
      g.groups.push_back(members_of);
      g.form.push_back(direction);
    }
  }
  SparseMatrix random_out = test::random_sparse(rng, d, general, 0.3);
  for (int c = 0; c < random_out.outerSize(); ++c)
    for (SparseMatrix::InnerIterator it(random_out, c); it; ++it)
      out.emplace_back(c, it.col(), it.value());
  g.mlp.in_weight = SparseMatrix(units, d);
  g.mlp.in_weight.setFromTriplets(in.begin(), in.end());
  g.mlp.out_weight = SparseMatrix(d, units);
  g.mlp.out_weight.setFromTriplets(out.begin(), out.end());  // repeated entries are summed
  g.mlp.in_bias = Eigen::Map<Eigen::VectorXf>(bias.data(), units);
  g.mlp.out_bias = Eigen::VectorXf::Zero(d);
  if (rng() % 2) g.mlp.out_bias[rng() % d] = 0.5f;
  return g;
}

}  // namespace

TEST_CASE("units sharing one input form: prefix sums over thresholds equal the dense formula") {
  std::mt19937_64 rng(606);
  kernels::MlpScratch scratch;
  int at_threshold = 0, rows_checked = 0;
  for (int round = 0; round < 80; ++round) {
    CAPTURE(round);
    const int d = std::uniform_int_distribution<int>(2, 8)(rng);
    const SharedGroupMlp g = random_shared_mlp(rng, d, 1 + round % 3);
    const PreparedMlp prepared = prepare_mlp(g.mlp);

    // Every group built is shared (perhaps joined by random units on the same form), and the
    // units of the small group are not.
    std::set<int> shared_units;
    for (const auto& s : prepared.shared_input)
      shared_units.insert(s.units().begin(), s.units().end());
    for (const auto& members : g.groups)
      for (int u : members) CHECK(shared_units.count(u) == 1);
    for (int u : g.too_few) CHECK(shared_units.count(u) == 0);

    const int n = 40;
    kernels::Activations<double> x(n, d);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c)
        x(i, c) = rng() % 4 == 0 ? 0.0 : std::uniform_real_distribution<double>(-10.0, 10.0)(rng);
    // Half the rows put a group's z exactly on one of its units' thresholds.
    for (int i = 0; i < n; i += 2) {
      const std::size_t k = rng() % g.groups.size();
      const int u = g.groups[k][rng() % g.groups[k].size()];
      const double factor = SparseMatrix::InnerIterator(g.mlp.in_weight, u).value();
      const double threshold = -static_cast<double>(g.mlp.in_bias[u]) / factor;
      for (const auto& [c, coefficient] : g.form[k]) x(i, c) = 0.0;
      x(i, g.form[k][0].first) = threshold;  // coefficient 1: z = threshold
      ++at_threshold;
    }
    kernels::Activations<double> y = x;
    kernels::apply_mlp(prepared, y, 0, n, scratch);
    for (int i = 0; i < n; ++i) {
      const DenseRow expected = dense_mlp(g.mlp, x.row(i).transpose());
      for (int c = 0; c < d; ++c) {
        CAPTURE(i);
        CAPTURE(c);
        CHECK(std::abs(y(i, c) - expected.value[c]) <= 1e-13 * (expected.magnitude[c] + 1e-300));
      }
      ++rows_checked;
    }
  }
  CHECK(at_threshold == 80 * 20);
  CHECK(rows_checked == 80 * 40);
}

TEST_CASE(
    "units sharing one input form, float32 activations: the dense formula within float32 "
    "rounding") {
  std::mt19937_64 rng(607);
  kernels::MlpScratch scratch;
  for (int round = 0; round < 40; ++round) {
    const int d = std::uniform_int_distribution<int>(2, 8)(rng);
    const SharedGroupMlp g = random_shared_mlp(rng, d, 2);
    const PreparedMlp prepared = prepare_mlp(g.mlp);
    const int n = 30;
    kernels::Activations<float> x(n, d);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c)
        x(i, c) = std::uniform_real_distribution<float>(-10.0f, 10.0f)(rng);
    kernels::Activations<float> y = x;
    kernels::apply_mlp(prepared, y, 0, n, scratch);
    for (int i = 0; i < n; ++i) {
      const DenseRow expected = dense_mlp(g.mlp, x.row(i).cast<double>().transpose());
      // The result is stored once in float32 (half an ulp); the general units' hidden values
      // are stored in float32 too (half an ulp of each term).
      for (int c = 0; c < d; ++c)
        CHECK(std::abs(y(i, c) - expected.value[c]) <=
              1e-6 * (expected.magnitude[c] + std::abs(expected.value[c])));
    }
  }
}

TEST_CASE(
    "networks whose MLPs hold shared-input groups: the forward pass equals the plain dense one") {
  std::mt19937_64 rng(608);
  int words = 0, groups = 0;
  for (int i = 0; i < 15; ++i) {
    test::RandomNetworkShape shape;
    shape.max_len = 80;
    const Automaton a = test::random_automaton(rng, 4, 3);
    Network n = test::random_network(rng, a, shape);
    for (auto& layer : n.layers) {
      layer.mlp = random_shared_mlp(rng, n.d_model(), 1 + static_cast<int>(rng() % 3)).mlp;
      groups += static_cast<int>(prepare_mlp(*layer.mlp).shared_input.size());
    }
    ForwardPass f64(n, {AttentionKind::Softmax, Arithmetic::Float64, 1});
    ForwardPass f32(n, {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 1});
    for (int w = 0; w < 4; ++w) {
      const auto word = test::random_word(rng, static_cast<int>(a.letter_count()),
                                          w == 0 ? 80 : static_cast<int>(rng() % 81));
      const Eigen::MatrixXd oracle = test::naive_logits(n, word);
      const double size = 1.0 + oracle.cwiseAbs().maxCoeff();
      CHECK((f64.run(word) - oracle).cwiseAbs().maxCoeff() <= 1e-12 * size);
      CHECK((f32.run(word) - oracle).cwiseAbs().maxCoeff() <= 1e-5 * size);
      ++words;
    }
  }
  CHECK(words == 60);
  CHECK(groups >= 15);
}

TEST_CASE(
    "a compiled residue comb at max-len 1024: outputs exactly one-hot on the plateaus, equal to "
    "the dense formula") {
  // cyclic_5 compiles to one layer: a counter head writes the count, one MLP (the comb,
  // 2 units per possible count 0 .. 4 * 1024 and the margins) turns it into its residue.
  const Automaton a = test::reference_automaton("cyclic_5");
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = 1024;
  const Network net = compile(a, options).network;
  REQUIRE(net.layers.size() == 1);
  REQUIRE(net.layers[0].mlp);
  const Mlp& mlp = *net.layers[0].mlp;
  const PreparedMlp prepared = prepare_mlp(mlp);
  // The whole comb is one group on two dims: the count, and the constant `one` that carries
  // the offset putting every unit's pre-activation on the float32 quarter grid.
  REQUIRE(prepared.shared_input.size() == 1);
  const SharedInputUnits& comb = prepared.shared_input[0];
  REQUIRE(comb.direction().size() == 2);
  CHECK(comb.units().size() == static_cast<std::size_t>(mlp.hidden()));
  int count_dim = -1, one_dim = -1;
  for (const auto& [dim, weight] : comb.direction())
    (net.residual_labels[dim].find("count") != std::string::npos ? count_dim : one_dim) = dim;
  REQUIRE(count_dim >= 0);
  REQUIRE(one_dim >= 0);
  CHECK(net.residual_labels[one_dim] == "one");
  // The residue one-hot: the dims the comb writes, labelled by residue 0..4.
  std::vector<int> residue_dims;
  for (int c = 0; c < net.d_model(); ++c)
    if (mlp.out_weight.row(c).nonZeros() > 0) residue_dims.push_back(c);
  REQUIRE(residue_dims.size() == 5);

  const long max_value = 4L * 1024;
  std::mt19937_64 rng(5);
  std::vector<long> counts{0, 1, 2, 3, 4, 5, max_value - 1, max_value};
  for (int i = 0; i < 400; ++i)
    counts.push_back(std::uniform_int_distribution<long>(0, max_value)(rng));
  const float offsets[] = {0.0f, 0.2f, -0.2f, 0.1f, -0.05f};
  const int n = static_cast<int>(counts.size() * std::size(offsets));
  kernels::Activations<float> x = kernels::Activations<float>::Zero(n, net.d_model());
  int row = 0;
  for (long m : counts)
    for (float offset : offsets) {
      x(row, one_dim) = 1.0f;
      x(row++, count_dim) = static_cast<float>(m) + offset;
    }
  kernels::Activations<float> y = x;
  kernels::MlpScratch scratch;
  kernels::apply_mlp(prepared, y, 0, n, scratch);
  row = 0;
  int dense_checked = 0;
  for (long m : counts)
    for (std::size_t k = 0; k < std::size(offsets); ++k, ++row) {
      CAPTURE(m);
      CAPTURE(offsets[k]);
      if (m == 0 && offsets[k] < 0.0f) continue;  // below any count
      // Oracle 1: within 1/4 of m, the residue m mod 5, exactly 0 or 1.
      for (int r = 0; r < 5; ++r) CHECK(y(row, residue_dims[r]) == (m % 5 == r ? 1.0f : 0.0f));
      // Oracle 2: the dense formula (every one of the 65,540 units), on some rows.
      if (row % 7 == 0) {
        const DenseRow expected = dense_mlp(mlp, x.row(row).cast<double>().transpose());
        for (int c = 0; c < net.d_model(); ++c)
          CHECK(static_cast<double>(y(row, c)) == expected.value[c]);
        ++dense_checked;
      }
    }
  CHECK(dense_checked > 200);
}
