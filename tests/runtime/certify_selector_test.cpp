// krc certify's selector rule (runtime/src/certify/selector_rule.cpp, compiler/certify.md "Next:
// the selector rule") on binary-coordinate scan networks: it agrees with the pairs rule (every
// (fetched, current) pair of window transformations) wherever that one decides, and it refuses
// a planted fault in a compose unit at the layer that holds it. The oracles: the pairs rule
// (an independent proof of the same claim, itself re-checked by tools/check_certificate.py and
// by the verifier in certify_test.cpp), the automaton (the verifier's words), and the fault's
// place, chosen by the test.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "certify/selector_rule.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/certify.hpp"
#include "krc/runtime/verifier.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

// A random complete automaton with exactly n states and 2 letters.
Automaton random_states(std::mt19937_64& rng, int n) {
  std::vector<std::string> states;
  for (int i = 0; i < n; ++i) states.push_back("q" + std::to_string(i));
  std::uniform_int_distribution<StateId> target(0, static_cast<StateId>(n - 1));
  std::vector<std::vector<StateId>> delta(2, std::vector<StateId>(n));
  for (auto& row : delta)
    for (auto& t : row) t = target(rng);
  return Automaton("random_" + std::to_string(n), states, {"a", "b"}, delta, target(rng));
}

Network bf16_scan(const Automaton& a, int max_len) {
  CompileOptions options;
  options.strategy = Strategy::Scan;
  options.max_len = max_len;
  options.precision = Precision::BFloat16;
  return compile(a, options).network;
}

CertifyResult certify_by(const Network& n, const Automaton& a, CertifyRule rule) {
  CertifyOptions options;
  options.arithmetic = Arithmetic::BFloat16;
  options.rule = rule;
  return certify(n, a, options);
}

std::string why(const CertifyResult& r) { return r.refusal ? r.refusal->reason : std::string(); }

// The next bf16 number above x (x positive or negative): one ulp of the certified format, which
// a float32 ulp would not be (the certifier rounds every weight to bf16 first).
float bf16_ulp_up(float x) {
  const double ulp = std::ldexp(1.0, std::ilogb(x) - 7);
  return static_cast<float>(x + ulp);
}

}  // namespace

TEST_CASE("certify selector rule: agrees with the pairs rule on random binary-coordinate scans") {
  std::mt19937_64 rng(3636);
  // 6 to 10 states at max-len 8 (3 steps): Release 3 automata a size; the sanitizer lane
  // (KRC_TEST_SCALE 0.05) one of 6 and one of 10 states.
  const int per_size = test::scaled(3);
  int compared = 0;
  for (int n : {6, 8, 10}) {
    for (int k = 0; k < per_size; ++k) {
      const Automaton a = random_states(rng, n);
      const Network net = bf16_scan(a, 8);
      CAPTURE(n);
      CAPTURE(k);
      REQUIRE(certify_detail::binary_slots(net, a).has_value());  // the form the rule covers
      const CertifyResult pairs = certify_by(net, a, CertifyRule::Pairs);
      const CertifyResult selector = certify_by(net, a, CertifyRule::Selector);
      INFO(why(pairs));
      INFO(why(selector));
      CHECK(selector.certified());
      CHECK(selector.certificate["claim"]["rule"] == "selector");
      // The unembedding's margin is 2 (README "bf16 and fp16"): a code against b bits.
      if (selector.certified())
        CHECK(selector.certificate["claim"]["margin"].get<double>() == doctest::Approx(2.0));
      if (pairs.refusal && pairs.refusal->undecided) continue;
      ++compared;
      CHECK(pairs.certified() == selector.certified());
      if (pairs.certified() && selector.certified())
        CHECK(pairs.certificate["claim"]["margin"] == selector.certificate["claim"]["margin"]);
      // Auto takes the pairs rule where it decides.
      CHECK(certify_by(net, a, CertifyRule::Auto).certificate["claim"]["rule"] == "pairs");
    }
  }
  // At max-len 8 the windows stay small: the pairs rule decides on every one of them.
  CHECK(compared == 3 * per_size);
}

TEST_CASE("certify selector rule: a one-ulp fault in a compose unit is refused at its layer") {
  std::mt19937_64 rng(3637);
  const Automaton a = random_states(rng, 7);
  const Network clean = bf16_scan(a, 8);
  const auto slots = certify_detail::binary_slots(clean, a);
  REQUIRE(slots.has_value());
  REQUIRE(certify_by(clean, a, CertifyRule::Selector).certified());
  VerifyOptions v;
  v.random_words = 10;
  v.forward.arithmetic = Arithmetic::BFloat16;  // the arithmetic certified
  REQUIRE(verify(clean, a, v).ok());
  const int faulty = 1;  // step 2 of 3: composes every slot and clears the fetched copy
  // The first unit of the compose block: a lookup (q, j, i) reading the fetched slot q.
  auto check_refused = [&](const Network& n) {
    for (CertifyRule rule : {CertifyRule::Selector, CertifyRule::Pairs}) {
      const CertifyResult r = certify_by(n, a, rule);
      CAPTURE(static_cast<int>(rule));
      REQUIRE(!r.certified());
      INFO(r.refusal->reason);
      CHECK(!r.refusal->undecided);
      CHECK(r.refusal->layer == faulty);
      CHECK(r.refusal->part.find("step 2") != std::string::npos);
    }
  };
  SUBCASE("an output weight of a lookup unit") {
    Network n = clean;
    SparseMatrix& out = n.layers[faulty].mlp->out_weight;
    bool planted = false;
    for (int r = 0; r < out.outerSize() && !planted; ++r)
      for (SparseMatrix::InnerIterator it(out, r); it; ++it)
        if (it.col() == 0) {
          it.valueRef() = bf16_ulp_up(it.value());
          planted = true;
          break;
        }
    REQUIRE(planted);
    check_refused(n);
  }
  SUBCASE("an input weight of a lookup unit") {
    // Unit 0 looks up bit 0 of y(0) (weight 1) when the fetched slot 0 spells state 0. One bf16
    // ulp more (1 + 2^-7) is absorbed: the matched sum 4 + 2^-7 rounds to 4 in bf16 before the
    // bias, so both rules certify it, and the verifier agrees; 8 ulps (1 + 2^-4) are not.
    auto with_weight = [&](float w) {
      Network n = clean;
      SparseMatrix& in = n.layers[faulty].mlp->in_weight;
      for (SparseMatrix::InnerIterator it(in, 0); it; ++it)
        if (it.col() == slots->prefix_dim(0, 0)) {
          REQUIRE(it.value() == 1.0f);
          it.valueRef() = w;
          return n;
        }
      FAIL("unit 0 does not read bit 0 of slot 0");
      return n;
    };
    const Network absorbed = with_weight(bf16_ulp_up(1.0f));
    CHECK(certify_by(absorbed, a, CertifyRule::Selector).certified());
    CHECK(certify_by(absorbed, a, CertifyRule::Pairs).certified());
    CHECK(verify(absorbed, a, v).ok());
    check_refused(with_weight(1.0625f));
  }
  SUBCASE("the bias of a lookup unit") {
    Network n = clean;
    float& b = n.layers[faulty].mlp->in_bias[0];
    b = bf16_ulp_up(b);
    check_refused(n);
  }
}

TEST_CASE("certify selector rule: auto moves to it where the pairs rule is undecided") {
  std::mt19937_64 rng(3639);
  const Automaton a = random_states(rng, 6);
  const Network net = bf16_scan(a, 8);
  CertifyOptions options;
  options.arithmetic = Arithmetic::BFloat16;
  options.max_domain = 2;  // the pairs rule stops at the first layer whose windows pass 2
  options.rule = CertifyRule::Pairs;
  const CertifyResult pairs = certify(net, a, options);
  REQUIRE(!pairs.certified());
  CHECK(pairs.refusal->undecided);
  options.rule = CertifyRule::Auto;
  const CertifyResult automatic = certify(net, a, options);
  INFO(why(automatic));
  CHECK(automatic.certified());
  CHECK(automatic.certificate["claim"]["rule"] == "selector");
}

TEST_CASE("certify selector rule: a network in another form is a question, not a refusal") {
  std::mt19937_64 rng(3638);
  const Automaton a = random_states(rng, 6);
  CompileOptions options;
  options.strategy = Strategy::Scan;
  options.max_len = 8;  // float32: not binary coordinates (the form needs bf16 or fp16)
  const Network n = compile(a, options).network;
  REQUIRE(!certify_detail::binary_slots(n, a).has_value());
  CertifyOptions c;
  c.rule = CertifyRule::Selector;
  CHECK_THROWS_AS(certify(n, a, c), std::invalid_argument);
}
