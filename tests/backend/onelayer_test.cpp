// The onelayer strategy: one attention layer with one rank-1 head as a contextual mapping, then
// feed-forward decoding. Oracles: the automaton (states, transformations by brute force), the
// weights file read back (ranks), the plain dense forward pass of the test support (softmax,
// and hardmax everywhere as Yun et al. define it), and krc's verifier in hardmax mode.
#include <doctest/doctest.h>

#include <Eigen/SVD>
#include <cmath>
#include <map>
#include <set>

#include "krc/automata/input_error.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/verifier.hpp"
#include "krc/runtime/weights_file.hpp"
#include "naive_forward.hpp"
#include "onelayer_support.hpp"
#include "test_support.hpp"

using namespace krc;
using test::onelayer::compile_at;
using test::onelayer::largest_len;

namespace {

// Every word of length <= L over the alphabet, shortest first.
std::vector<std::vector<LetterId>> words_up_to(std::size_t letters, int max_len) {
  std::vector<std::vector<LetterId>> all;
  for (int t = 0; t <= max_len; ++t)
    for (auto& w : test::onelayer::words_of_length(letters, t)) all.push_back(std::move(w));
  return all;
}

// The network cut after its attention: the residual there holds z, which nothing later writes.
Network attention_only(const Network& net) {
  Network cut = net;
  cut.layers.resize(1);
  cut.layers[0].mlp.reset();
  return cut;
}

int subspace_dim(const Network& net, RoleKind kind) {
  for (const auto& s : net.subspaces)
    if (s.role.kind == kind) return s.first;
  FAIL("no subspace with role " << to_string(kind));
  return -1;
}

std::string spell(const Automaton& a, const std::vector<LetterId>& word) {
  std::string line;
  for (LetterId l : word) line += (line.empty() ? "" : " ") + a.letter_name(l);
  return line;
}

std::vector<LetterId> letters_of(const Automaton& a, const std::vector<std::string>& names) {
  std::vector<LetterId> word;
  for (const auto& n : names) word.push_back(static_cast<LetterId>(a.find_letter(n)));
  return word;
}

}  // namespace

TEST_CASE("onelayer: exactly one attention layer with one head whose W_Q W_K^T has rank 1") {
  test::TempDir dir;
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const CompileResult built = compile_at(a, std::min(largest_len(a), 6));
    // Read back from the file, as another tool would see it.
    const std::string bytes = network_to_safetensors(built.network);
    const Network net = network_from_safetensors(parse_safetensors(bytes, name), name);
    int attention_layers = 0;
    for (const auto& layer : net.layers) attention_layers += layer.heads.empty() ? 0 : 1;
    CHECK(attention_layers == 1);
    REQUIRE(net.layers.at(0).heads.size() == 1);
    const AttentionHead& head = net.layers[0].heads[0];
    const Eigen::MatrixXd qk = Eigen::MatrixXd(head.query.cast<double>()) *
                               Eigen::MatrixXd(head.key.cast<double>()).transpose();
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(qk);
    svd.setThreshold(1e-9);
    CHECK(svd.rank() == 1);
    CHECK(net.layers.size() == static_cast<std::size_t>(built.onelayer->layers()));
    for (std::size_t i = 1; i < net.layers.size(); ++i) CHECK(net.layers[i].heads.empty());
  }
}

TEST_CASE("onelayer: the plan predicts the network and every part carries its role") {
  for (const char* name : {"parity", "flipflop_2", "dihedral_3", "abab", "gridworld_4"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const CompileResult built = compile_at(a, std::min(largest_len(a), 7));
    const OneLayerPlan& plan = *built.onelayer;
    const NetworkSize size = built.network.size();
    CHECK(size.layers == plan.layers());
    CHECK(size.heads == 1);
    int hidden = 0;
    for (int h : size.mlp_hidden) hidden += h;
    CHECK(hidden == plan.units());
    CHECK(plan.run_states.size() == plan.thresholds.size() + 1);
    CHECK(built.network.layers[0].heads[0].role.kind == RoleKind::ContextualValue);
    std::multiset<RoleKind> blocks;
    for (const auto& layer : built.network.layers)
      if (layer.mlp)
        for (const auto& b : layer.mlp->blocks) blocks.insert(b.role.kind);
    CHECK(blocks == std::multiset<RoleKind>{RoleKind::ValueThreshold, RoleKind::ValueDecode});
    std::set<RoleKind> subspaces;
    for (const auto& s : built.network.subspaces) subspaces.insert(s.role.kind);
    for (RoleKind k : {RoleKind::LetterCode, RoleKind::ContextualValue, RoleKind::ValueThreshold,
                       RoleKind::State})
      CHECK(subspaces.count(k) == 1);
    for (RoleKind k : {RoleKind::LetterCode, RoleKind::ContextualValue, RoleKind::ValueThreshold,
                       RoleKind::ValueDecode})
      CHECK(role_kind_from_string(to_string(k)) == k);
  }
}

// Brute force over every word up to L: the values z the network gives prefixes (read after its
// attention) against the plan's count, the transformations against the plan's, and
// positional codes injective on letter-class sequences.
TEST_CASE("onelayer: distinct prefixes get distinct values, and the plan counts them right") {
  for (const char* name : {"parity", "cyclic_3", "flipflop_2", "dihedral_3", "gridworld_4", "abab",
                           "quaternion", "symmetric_3"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const int L = std::min(largest_len(a), 5);
    const CompileResult built = compile_at(a, L);
    const OneLayerPlan& plan = *built.onelayer;
    const Network cut = attention_only(built.network);
    const int z_dim = subspace_dim(cut, RoleKind::ContextualValue);
    std::vector<double> values;
    std::set<std::vector<StateId>> transformations;
    std::set<StateId> reached;
    std::map<std::vector<int>, double> by_classes;  // letter-class sequence (or counts) -> z
    for (const auto& word : words_up_to(a.letter_count(), L)) {
      const double z =
          test::naive_residual(cut, word)(static_cast<Eigen::Index>(word.size()), z_dim);
      values.push_back(z);
      std::vector<StateId> f(a.state_count());
      for (StateId q = 0; q < a.state_count(); ++q) f[q] = a.run(word, q).back();
      transformations.insert(f);
      reached.insert(a.run(word).back());
      std::vector<int> key;  // positional: the digits; Counts: the multiset of count weights
      for (LetterId l : word)
        if (plan.code != ContextCode::Counts || plan.letter_code[l] != 0)
          key.push_back(plan.letter_code[l]);
      if (plan.code == ContextCode::Counts) std::sort(key.begin(), key.end());
      auto it = by_classes.emplace(key, z).first;
      CHECK(std::abs(it->second - z) <= 1e-6 * std::abs(z));  // equal keys: equal values
    }
    std::sort(values.begin(), values.end());
    long long distinct = 1;
    for (std::size_t i = 1; i < values.size(); ++i)
      distinct += values[i] - values[i - 1] > 1e-6 * std::abs(values[i]) ? 1 : 0;
    CHECK(distinct == plan.values);
    CHECK(static_cast<long long>(by_classes.size()) == plan.values);  // different keys differ
    CHECK(static_cast<long long>(transformations.size()) == plan.transformations);
    CHECK(static_cast<long long>(reached.size()) == plan.reachable_states);
  }
}

TEST_CASE("onelayer: beyond the largest max-len the plan refuses and names the largest") {
  for (const char* name : {"parity", "flipflop_2", "dihedral_3", "quaternion"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const int largest = largest_len(a);
    CHECK_NOTHROW(compile_at(a, largest));
    try {
      compile_at(a, largest + 1);
      FAIL("compiled beyond the largest max-len");
    } catch (const LimitError& e) {
      const std::string message = e.what();
      CAPTURE(message);
      CHECK(test::contains(message, "largest max-len for it is " + test::with_commas(largest)));
      CHECK(test::contains(message, "at " + test::with_commas(largest + 1) + ": "));
    }
  }
  // dihedral_3 stops at the units limit: raising it reaches further, until float32 stops it.
  const Automaton d3 = test::reference_automaton("dihedral_3");
  OneLayerOptions more;
  more.max_units = 1 << 16;
  const int with_more = plan_onelayer(d3, 1, more).largest_len;
  CHECK(with_more > largest_len(d3));
  try {
    plan_onelayer(d3, with_more + 1, more);
    FAIL("planned beyond the largest max-len");
  } catch (const LimitError& e) {
    CHECK(test::contains(e.what(), "float32"));
  }
}

// Hardmax as Yun et al. define it (uniform over tied maxima) on every head: the one head then
// sees only its maximal scores. Counts put the maximum on BOS alone (query ln(L+1-t) > 0 on the
// BOS key, t < L), so z = 0 for every prefix shorter than L; positional codes (LatestFirst) put
// it on the latest position alone, so z depends only on the last letter. Either way two
// prefixes with different states get identical logits: one of them must be wrong. The plain
// forward pass of the test support shows it on a chosen pair; krc's verifier in hardmax mode
// must find a counterexample of its own, which the plain pass confirms. Softmax verifies.
static void check_hardmax_pair(const Automaton& a, const Network& net,
                               const std::vector<std::string>& wrong_names,
                               const std::vector<std::string>& twin_names) {
  const auto wrong = letters_of(a, wrong_names), twin = letters_of(a, twin_names);
  const auto t = static_cast<Eigen::Index>(wrong.size());
  const Eigen::MatrixXd hard_wrong = test::naive_logits(net, wrong, AttentionKind::Hardmax);
  const Eigen::MatrixXd hard_twin = test::naive_logits(net, twin, AttentionKind::Hardmax);
  CHECK(hard_wrong.row(t) == hard_twin.row(t));  // the head saw the same thing
  const StateId expected = a.run(wrong).back();
  REQUIRE(expected != a.run(twin).back());
  const int got = test::naive_states(net, wrong, AttentionKind::Hardmax).at(t);
  CHECK(got != static_cast<int>(expected));
  MESSAGE(a.name() << ": under hardmax '" << spell(a, wrong) << "' at position " << t << " gives "
                   << (got < 0 ? "a tie" : a.state_name(got)) << ", the automaton "
                   << a.state_name(expected));
  CHECK(test::naive_states(net, wrong).at(t) == static_cast<int>(expected));
}

// krc's verifier with `--attention hardmax` (float32) on every word of max_len letters: it must
// fail, and its counterexample must be one: the automaton's states, a wrong position, and the
// plain forward pass's hardmax agreeing with the state the verifier saw.
static void check_hardmax_counterexample(const Automaton& a, const Network& net) {
  VerifyOptions options;
  options.exhaustive_length = net.max_len;
  options.random_words = 0;
  options.forward.attention = AttentionKind::Hardmax;
  options.forward.arithmetic = Arithmetic::Float32;
  const VerifyReport report = verify(net, a, options);
  REQUIRE_FALSE(report.ok());
  REQUIRE(report.counterexample.has_value());
  const Counterexample& c = *report.counterexample;
  const auto at = static_cast<std::size_t>(c.first_error.position);
  const std::vector<LetterId> prefix(c.word.begin(), c.word.begin() + static_cast<long>(at));
  CHECK(c.expected == a.run(c.word));
  const int plain = test::naive_states(net, prefix, AttentionKind::Hardmax).at(at);
  CHECK(plain != static_cast<int>(c.expected.at(at)));
  if (plain >= 0) CHECK(c.actual.at(at) == static_cast<StateId>(plain));
  MESSAGE(a.name() << ": krc verify --attention hardmax: '" << spell(a, prefix) << "' gives "
                   << (plain < 0 ? std::string("a tie") : a.state_name(plain)) << ", the automaton "
                   << a.state_name(c.expected.at(at)) << " (" << report.wrong_words
                   << " of the words of length " << net.max_len << " wrong)");
}

TEST_CASE(
    "onelayer: hardmax everywhere fails on parity, cyclic_3 and flipflop_2 where softmax "
    "verifies") {
  struct Case {
    const char* name;
    ContextCode code;
    std::vector<std::string> wrong, twin;  // same hardmax logits at their last position
  };
  const std::vector<Case> cases{
      {"parity", ContextCode::Counts, {"0", "1"}, {"1", "1"}},
      {"cyclic_3", ContextCode::Counts, {"1"}, {"0"}},
      {"flipflop_2", ContextCode::LatestFirst, {"w1", "read"}, {"w0", "read"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const Automaton a = test::reference_automaton(c.name);
    const CompileResult built = compile_at(a, std::min(largest_len(a), 8));
    REQUIRE(built.onelayer->code == c.code);
    check_hardmax_pair(a, built.network, c.wrong, c.twin);
    check_hardmax_counterexample(a, built.network);
    // Softmax verifies every word; so does `hard` attention, which keeps softmax for `average`
    // heads such as this one.
    for (AttentionKind kind : {AttentionKind::Softmax, AttentionKind::Hard}) {
      VerifyOptions options;
      options.exhaustive_length = built.network.max_len;
      options.random_words = 0;
      options.forward.attention = kind;
      options.forward.arithmetic = Arithmetic::Float32;
      CHECK(verify(built.network, a, options).ok());
    }
  }
}

// Auto builds the three strategies and keeps the fewest layers, then the fewest parameters;
// onelayer takes part wherever its plan fits the max-len.
TEST_CASE("onelayer: auto keeps it where its two layers are the fewest") {
  for (const char* name : {"parity", "dihedral_3", "gridworld_9", "flipflop_2", "quaternion"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const int max_len = 8;
    std::vector<std::pair<Strategy, NetworkSize>> built;
    for (Strategy s : {Strategy::Scan, Strategy::Kr, Strategy::OneLayer}) {
      CompileOptions options;
      options.strategy = s;
      options.max_len = max_len;
      try {
        built.emplace_back(s, compile(a, options).network.size());
      } catch (const LimitError&) {
        CHECK(s == Strategy::OneLayer);
        CHECK(largest_len(a) < max_len);
      }
    }
    auto best = built.front();
    for (const auto& b : built)
      if (b.second.layers < best.second.layers ||
          (b.second.layers == best.second.layers && b.second.parameters < best.second.parameters))
        best = b;
    CompileOptions options;
    options.max_len = max_len;
    const CompileResult chosen = compile(a, options);
    CHECK(chosen.strategy == best.first);
    CHECK(chosen.onelayer.has_value() == (best.first == Strategy::OneLayer));
  }
  CompileOptions options;
  options.max_len = 8;
  CHECK(compile(test::reference_automaton("abab"), options).strategy == Strategy::OneLayer);
}
