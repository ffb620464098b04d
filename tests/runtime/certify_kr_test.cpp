// krc certify on kr networks, as far as it is built (compiler/certify.md, "What is built"):
// the heads' obligations hold on flipflop_2 (a memory head) and parity (a whole-sum counter),
// with the figures the construction argues independently (lambda = 20, README §4: the latest
// flagged key wins by 20, the others weigh e^-20 / (1 - e^-20) at most; an increment of 1 per
// '1'); parity and cyclic_5 (one counter, its residue comb, the unembedding) are certified,
// over the prefix summaries the automaton gives; flipflop (a memory copy, not followed) is
// undecided at its head; planted head and comb faults are refused, naming the layer and the
// head or block, not as undecided.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/certify.hpp"

using namespace krc;

namespace {

Network kr_network(const Automaton& a, int max_len) {
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = max_len;
  return compile(a, options).network;
}

CertifyResult certify_kr(const Network& n, const Automaton& a) { return certify(n, a, {}); }

}  // namespace

TEST_CASE("certify kr: the heads of flipflop_2 and parity hold; parity is certified") {
  const Automaton flipflop = zoo_automaton("flipflop", 2);
  const Network fn = kr_network(flipflop, 64);
  const CertifyResult f = certify_kr(fn, flipflop);
  REQUIRE(f.refusal);
  CHECK(f.refusal->undecided);
  CHECK(f.refusal->layer == 0);  // the memory head's copy is not followed (not built)
  CHECK(f.refusal->part == fn.layers[0].heads[0].name);
  REQUIRE(f.certificate["obligations"].size() == 1);
  const auto& memory = f.certificate["obligations"][0];
  CHECK(memory["kind"] == "select");
  CHECK(memory["key_values"] == 2);  // the reset flag: 0 or 1
  CHECK(memory["min_gap"].get<double>() == doctest::Approx(20.0));
  const double geometric = std::exp(-20.0) / (1.0 - std::exp(-20.0));
  CHECK(memory["leak"].get<double>() >= geometric * (1.0 - 1e-6));
  CHECK(memory["leak"].get<double>() <= 2.0 * geometric);

  const Automaton parity = zoo_automaton("parity");
  const CertifyResult p = certify_kr(kr_network(parity, 64), parity);
  REQUIRE_FALSE(p.refusal);
  CHECK(p.certified());
  CHECK(p.certificate["claim"]["margin"].get<double>() > 0.0);
  // The head, the summaries, layer 0's comb, the unembedding.
  REQUIRE(p.certificate["obligations"].size() == 4);
  const auto& sum = p.certificate["obligations"][0];
  CHECK(sum["kind"] == "average");
  CHECK(sum["increments"]["0"] == 0.0);
  CHECK(sum["increments"]["1"] == 1.0);
  // About 2 t^2 2^-24 (the two gamma terms of the design's bound) at t = 63: 4.7e-4.
  CHECK(sum["epsilon"]["max"].get<double>() > 2.0 * 63 * 63 * 0x1p-24);
  CHECK(sum["epsilon"]["max"].get<double>() < 0.01);
  // The automaton's summaries at 64: BOS, then for every count z in 0..64 the last letter '0',
  // and for z in 1..64 the last letter '1' (the state is z mod 2): 1 + 65 + 64.
  CHECK(p.certificate["obligations"][1]["reachable"] == 130);
  CHECK(p.certificate["obligations"][3]["prefixes"] == 130);
}

TEST_CASE("certify kr: cyclic_5's counter certifies; a one-ulp comb fault is refused at it") {
  const Automaton cyclic = zoo_automaton("cyclic", 5);
  const Network n = kr_network(cyclic, 64);
  const CertifyResult ok = certify_kr(n, cyclic);
  REQUIRE_FALSE(ok.refusal);
  CHECK(ok.certificate["obligations"][1]["reachable"] == 130);  // as parity's: z and the letter
  REQUIRE(n.layers[0].mlp);
  const std::string comb = n.layers[0].mlp->blocks.front().name;
  SUBCASE("an output weight of the comb one ulp up") {
    Network bad = n;
    float& w = bad.layers[0].mlp->out_weight.valuePtr()[0];
    REQUIRE(std::fabs(w) == 2.0f);  // the trapezoids' output weights are +-2
    w = std::nextafter(w, std::numeric_limits<float>::infinity());
    const CertifyResult r = certify_kr(bad, cyclic);
    REQUIRE(r.refusal);
    CHECK_FALSE(r.refusal->undecided);
    CHECK(r.refusal->layer == 0);
    CHECK(r.refusal->part == comb);
    CHECK(r.refusal->reason.find("not an exact integer") != std::string::npos);
  }
  SUBCASE("a unit's offset M one ulp up: its breakpoint moves by a quarter") {
    Network bad = n;
    bool moved = false;
    for (int k = 0; k < bad.layers[0].mlp->in_weight.nonZeros() && !moved; ++k) {
      float& w = bad.layers[0].mlp->in_weight.valuePtr()[k];
      if (w == 3145728.0f) w = std::nextafter(w, 1e30f), moved = true;  // 1.5 2^21 + 1/4
    }
    REQUIRE(moved);
    const CertifyResult r = certify_kr(bad, cyclic);
    REQUIRE(r.refusal);
    CHECK_FALSE(r.refusal->undecided);
    CHECK(r.refusal->layer == 0);
    CHECK(r.refusal->part == comb);
  }
}

TEST_CASE("certify kr: planted head faults are refused with their layer and head") {
  const Automaton parity = zoo_automaton("parity");
  SUBCASE("one ulp on the counter's output weight: the increment is no longer an integer") {
    Network n = kr_network(parity, 64);
    float& w = n.layers[0].heads[0].output.valuePtr()[0];
    REQUIRE(w == 65.0f);  // N + 1: each '1' adds 1 to the count
    w = std::nextafter(w, std::numeric_limits<float>::infinity());
    const CertifyResult r = certify_kr(n, parity);
    REQUIRE(r.refusal);
    CHECK_FALSE(r.refusal->undecided);
    CHECK(r.refusal->layer == 0);
    CHECK(r.refusal->part == n.layers[0].heads[0].name);
    CHECK(r.refusal->reason.find("not an integer") != std::string::npos);
  }
  SUBCASE("the memory head's flag weight lowered to lambda: a flagged key ties a later one") {
    const Automaton flipflop = zoo_automaton("flipflop", 2);
    Network n = kr_network(flipflop, 64);
    SparseMatrix& q = n.layers[0].heads[0].query;
    bool lowered = false;
    for (int k = 0; k < q.nonZeros(); ++k)
      if (q.valuePtr()[k] == 1300.0f) q.valuePtr()[k] = 20.0f, lowered = true;  // (T+1) lambda
    REQUIRE(lowered);
    const CertifyResult r = certify_kr(n, flipflop);
    REQUIRE(r.refusal);
    CHECK_FALSE(r.refusal->undecided);
    CHECK(r.refusal->layer == 0);
    CHECK(r.refusal->reason.find("not unique") != std::string::npos);
  }
}

TEST_CASE(
    "certify kr: other arithmetics and max-lens past the network are questions, not refusals") {
  const Automaton parity = zoo_automaton("parity");
  const Network n = kr_network(parity, 16);
  CertifyOptions bf16;
  bf16.arithmetic = Arithmetic::BFloat16;
  CHECK_THROWS_AS(certify(n, parity, bf16), std::invalid_argument);
  CertifyOptions longer;
  longer.max_len = 17;
  CHECK_THROWS_AS(certify(n, parity, longer), std::invalid_argument);
}

TEST_CASE("certify kr: the walk's block sums are undecided (not built), never refused as wrong") {
  // gridworld_4's walk: its block-sum heads weigh 2^-k, not 1/(N + 1); a whole-sum check on
  // them would refuse a right network.
  const Automaton grid = zoo_automaton("gridworld", 4);
  const CertifyResult r = certify_kr(kr_network(grid, 64), grid);
  REQUIRE(r.refusal);
  CHECK(r.refusal->undecided);
  CHECK(r.refusal->layer == 0);
}
