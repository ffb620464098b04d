// The float32 error bound a onelayer plan relies on, against a float32 softmax written here.
// That onelayer networks compute their automata at the largest max-len their plan reports (krc's
// verifier in float32, numpy's float32 pass) is end_to_end_test.cpp's, over the table of cases
// (tests/support/cases.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "onelayer_support.hpp"
#include "test_support.hpp"

using namespace krc;
using test::onelayer::compile_at;
using test::onelayer::largest_len;
using test::onelayer::words_of_length;

namespace {

// The head's value z at the last position of `word`, with every operation in type T: scores
// from the network's weights, exp, the denominator and the weighted sum accumulated one term
// at a time, from BOS up or from the last position down.
template <typename T>
T head_value(const Network& net, const std::vector<LetterId>& word, bool downwards) {
  const AttentionHead& head = net.layers.at(0).heads.at(0);
  const int n = static_cast<int>(word.size()) + 1;
  auto row = [&](int t) {
    const int token = t == 0 ? 0 : static_cast<int>(word[t - 1]) + 1;
    return Eigen::VectorXf(net.token_embedding.row(token) + net.position_embedding.row(t));
  };
  auto project = [](const Eigen::VectorXf& x, const SparseMatrix& m) {  // one column: a scalar
    T sum = 0;
    for (int r = 0; r < m.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(m, r); it; ++it) sum += T(x[r]) * T(it.value());
    return sum;
  };
  const T q = project(row(n - 1), head.query);
  std::vector<T> s(n), v(n);
  for (int j = 0; j < n; ++j) {
    s[j] = T(net.attention_scale) * q * project(row(j), head.key);
    v[j] = project(row(j), head.value);
  }
  const T m = *std::max_element(s.begin(), s.end());
  T z = 0, sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(s[downwards ? n - 1 - i : i] - m);
  for (int i = 0; i < n; ++i) {
    const int j = downwards ? n - 1 - i : i;
    z += std::exp(s[j] - m) / sum * v[j];
  }
  SparseMatrix::InnerIterator out(head.output, 0);
  return z * T(out.value());
}

}  // namespace

TEST_CASE("onelayer: a float32 softmax stays within the plan's error bound") {
  for (const char* name :
       {"parity", "cyclic_5", "flipflop_2", "dihedral_3", "abab", "quaternion"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const int L = std::min(largest_len(a), 9);
    const CompileResult built = compile_at(a, L);
    const double bound = built.onelayer->relative_error;
    double worst = 0;
    for (int t = 1; t <= L; ++t) {
      for (const auto& w : words_of_length(a.letter_count(), t)) {
        const long double exact = head_value<long double>(built.network, w, false);
        for (bool down : {false, true}) {
          const double z = head_value<float>(built.network, w, down);
          if (exact == 0) {  // a prefix of identity letters under a counting code
            REQUIRE(z == 0);
            continue;
          }
          const double error = std::abs(z - double(exact)) / double(exact);
          worst = std::max(worst, error);
          REQUIRE(error <= bound);
        }
      }
    }
    MESSAGE(std::string(name) << ": worst float32 error " << worst << " of the bound " << bound);
  }
}
