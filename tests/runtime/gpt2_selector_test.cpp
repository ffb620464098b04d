// The GPT-2 prover's selector rule (runtime/src/export/gpt2_value_sets_mlp.cpp, compiler/certify.md
// "Next: the selector rule") is sound: on binary-coordinate scan networks, for every written
// coordinate of every MLP component, the set the rule gives holds the coordinate's value on every
// combination of the component's input sets, computed here by a plain forward of the MLP. And the
// check can fail: the rule run on a network with one unit's output weight zeroed (a rule that
// drops that unit) is caught.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "export/gpt2_value_sets.hpp"
#include "export/gpt2_value_sets_detail.hpp"
#include "krc/backend/compile.hpp"
#include "test_support.hpp"

namespace {

using krc::value_sets::Component;
using krc::value_sets::Set;
using krc::value_sets::Vector;

constexpr double kExhaustive = 4096;  // combinations enumerated whole; past it, a random sample
constexpr int kSample = 512;
// The rule with one unit dropped is tried on the first few coordinates with two values or more
// (a dropped unit need not lose a value: y_qi - 2 ReLU(y_qi) + 2 [y(j)_i = 1] without the last
// term still takes -1 and 1 where other j do, so one coordinate may not show it).
constexpr int kMutantCoordinates = 8;

// Per written coordinate of k (in k.written's order), the values it takes after layer `index`'s
// MLP on the combinations of k's groups' values (every one, or kSample random ones): the
// framework's float32 forward, the sums in row order. `exact` turns false where a double
// evaluation of the same sums differs (the rule claims them exact wherever it gives a set).
std::vector<std::set<float>> forward_values(const krc::Network& n, std::size_t index,
                                            const krc::ValueSets& s, const Component& k,
                                            std::mt19937_64& rng, bool& exact) {
  const krc::Mlp& m = *n.layers[index].mlp;
  const krc::value_sets::Weights inputs = krc::value_sets::rows_of(m.in_weight);
  const krc::value_sets::Weights feeds = krc::value_sets::rows_of(m.out_weight);
  std::vector<std::size_t> sizes;
  double total = 1;
  for (int g : k.groups) {
    sizes.push_back(s.values[static_cast<std::size_t>(g)].size());
    total *= static_cast<double>(sizes.back());
  }
  std::vector<std::set<float>> out(k.written.size());
  if (total == 0) return out;
  Vector x(static_cast<std::size_t>(n.d_model()), 0.0f);
  std::vector<std::size_t> at(sizes.size(), 0);
  const bool whole = total <= kExhaustive;
  for (long long combination = 0; whole || combination < kSample; ++combination) {
    if (!whole)
      for (std::size_t i = 0; i < at.size(); ++i)
        at[i] = std::uniform_int_distribution<std::size_t>(0, sizes[i] - 1)(rng);
    for (std::size_t i = 0; i < k.groups.size(); ++i) {
      const auto g = static_cast<std::size_t>(k.groups[i]);
      for (std::size_t j = 0; j < s.coords[g].size(); ++j)
        x[static_cast<std::size_t>(s.coords[g][j])] = s.values[g][at[i]][j];
    }
    std::map<int, std::pair<float, double>> hidden;  // unit: (float32, double)
    for (std::size_t i = 0; i < k.written.size(); ++i) {
      const int c = k.written[i];
      float y = x[static_cast<std::size_t>(c)] + m.out_bias[c];
      double z = static_cast<double>(x[static_cast<std::size_t>(c)]) + m.out_bias[c];
      for (const auto& [u, w] : feeds[static_cast<std::size_t>(c)]) {
        if (!hidden.count(u)) {
          float h = m.in_bias[u];
          double e = m.in_bias[u];
          for (const auto& [r, wr] : inputs[static_cast<std::size_t>(u)]) {
            h += wr * x[static_cast<std::size_t>(r)];
            e += static_cast<double>(wr) * x[static_cast<std::size_t>(r)];
          }
          hidden[u] = {std::max(h, 0.0f), std::max(e, 0.0)};
        }
        y += w * hidden[u].first;
        z += static_cast<double>(w) * hidden[u].second;
      }
      exact = exact && static_cast<double>(y) == z;
      out[i].insert(y);
    }
    if (whole) {
      std::size_t i = 0;
      for (; i < at.size() && ++at[i] == sizes[i]; ++i) at[i] = 0;
      if (i == at.size()) break;
    }
  }
  return out;
}

// Whether every value of `seen` is in the rule's set for the same coordinate.
bool covers(const std::vector<Set>& rule, const std::vector<std::set<float>>& seen) {
  for (std::size_t i = 0; i < seen.size(); ++i) {
    std::set<float> held;
    for (const Vector& v : rule[i]) held.insert(v.front());
    for (float v : seen[i])
      if (!held.count(v)) return false;
  }
  return true;
}

struct Tally {
  long long coordinates = 0;  // written coordinates whose rule sets were checked
  long long refused = 0;      // components the rule gave no sets for
  bool exact = true;
  int mutant_tries = 0;  // coordinates whose units were dropped one at a time
  bool mutant_caught = false;
};

// Checks the rule on every component of layer `index`'s MLP over the sets s, and, until it is
// seen once, that the rule run with one unit's output weight zeroed misses a value.
void check_layer(const krc::Network& n, std::size_t index, const krc::ValueSets& s,
                 std::mt19937_64& rng, Tally& tally) {
  for (const Component& k : krc::value_sets::mlp_components(n, index, s)) {
    if (k.interval) continue;
    const std::optional<std::vector<Set>> rule = krc::value_sets::selector_rule(n, index, s, k);
    if (!rule) {
      ++tally.refused;
      continue;
    }
    REQUIRE(rule->size() == k.written.size());
    const std::vector<std::set<float>> seen = forward_values(n, index, s, k, rng, tally.exact);
    CHECK(covers(*rule, seen));
    tally.coordinates += static_cast<long long>(k.written.size());
    if (tally.mutant_caught) continue;
    for (std::size_t i = 0; i < k.written.size() && !tally.mutant_caught; ++i) {
      if (seen[i].size() < 2 || tally.mutant_tries == kMutantCoordinates) continue;
      ++tally.mutant_tries;
      const int c = k.written[i];
      krc::Network mutant = n;
      krc::SparseMatrix& out = mutant.layers[index].mlp->out_weight;
      for (krc::SparseMatrix::InnerIterator it(out, c); it && !tally.mutant_caught; ++it) {
        // An explicit 0: the component's structure stays, the unit adds nothing to c.
        const float w = it.value();
        it.valueRef() = 0;
        const std::optional<std::vector<Set>> dropped =
            krc::value_sets::selector_rule(mutant, index, s, k);
        tally.mutant_caught = dropped && !covers(*dropped, seen);
        it.valueRef() = w;
      }
    }
  }
}

// Follows the value sets through n as the prover does (gpt2_exactness.cpp: position 0 and the
// later positions), every head taken as selecting (the rule's soundness is relative to the sets
// it is given, whatever they are), checking the rule at every MLP. `rule`: the MLPs' sets as the
// prover forms them, or as the selector rule alone leaves them (one group per coordinate, the
// form the 42-state TCP network is proven in).
void follow(const krc::Network& n, krc::value_sets::MlpRule rule, std::mt19937_64& rng,
            Tally& tally) {
  krc::ValueSets s[2] = {krc::initial_value_sets(n, true), krc::initial_value_sets(n, false)};
  for (std::size_t i = 0; i < n.layers.size(); ++i) {
    const std::vector<bool> all(n.layers[i].heads.size(), true);
    krc::attend_value_sets(n, i, all, s[1], &s[0]);
    krc::attend_value_sets(n, i, all, s[0], nullptr);
    if (!n.layers[i].mlp) continue;
    for (krc::ValueSets& at : s) {
      check_layer(n, i, at, rng, tally);
      krc::value_sets::mlp_value_sets(n, i, at, rule);
    }
  }
}

}  // namespace

TEST_CASE("gpt2 export: the selector rule's sets hold every value the MLP computes") {
  std::mt19937_64 rng(36);
  // 3 networks (1 in the sanitizer lane, at KRC_TEST_SCALE 0.05): about 1 s in Release.
  const long long wanted = krc::test::scaled(3);
  long long binary = 0;
  for (int tries = 0; binary < wanted && tries < 40; ++tries) {
    const krc::Automaton a = krc::test::random_automaton(rng, 6, 2);
    if (a.state_count() < 4) continue;
    krc::CompileOptions options;
    options.strategy = krc::Strategy::Scan;
    options.precision = krc::Precision::BFloat16;
    options.norm = krc::Norm::LayerNorm;
    options.max_len = 16;
    const krc::CompileResult r = krc::compile(a, options);
    REQUIRE(r.scan);
    if (r.scan->form != krc::ScanForm::BinaryCoordinates) continue;
    ++binary;
    CAPTURE(a.state_count());
    for (auto rule :
         {krc::value_sets::MlpRule::EnumerateFirst, krc::value_sets::MlpRule::SelectorOnly}) {
      Tally tally;
      follow(r.network, rule, rng, tally);
      INFO(tally.coordinates, " coordinates checked, ", tally.refused, " components refused");
      CHECK(tally.coordinates > 0);
      CHECK(tally.refused == 0);  // the rule covers every MLP component of these networks
      CHECK(tally.exact);
      CHECK(tally.mutant_caught);  // the check would fail a rule that drops a unit
    }
  }
  CHECK(binary == wanted);
}
