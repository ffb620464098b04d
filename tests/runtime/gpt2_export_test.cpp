// The GPT-2 export's exactness proof (krc/runtime/gpt2_export.hpp) on hand-built networks whose
// values are known: a select head whose score spread lambda lets its softmax weights fall to
// e^-lambda / 9, and the three ways the proof must answer.
#include "krc/runtime/gpt2_export.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"

namespace {

using krc::SparseMatrix;

SparseMatrix single(int rows, int cols, int r, int c, float v) {
  SparseMatrix m(rows, cols);
  m.insert(r, c) = v;
  m.makeCompressed();
  return m;
}

// Residual: 0 a constant 1, 1 "the letter is a", 2 the head's output. The head attends from
// every position to the a's with score lambda * [letter j is a] and copies [letter j is a]
// into coordinate 2: where no a is chosen, coordinate 2 keeps the leak of the others.
// `unembed` is the coordinate the one state's logit reads.
krc::Network leaking(float lambda, int unembed, float position_value = 0) {
  krc::Network n;
  n.max_len = 8;
  n.vocabulary = {"<bos>", "a", "b"};
  n.states = {"q"};
  n.residual_labels = {"constant", "is a", "copied"};
  n.token_embedding = krc::RowMatrix::Zero(3, 3);
  n.token_embedding.col(0).setOnes();
  n.token_embedding(1, 1) = 1;
  n.position_embedding = krc::RowMatrix::Zero(9, 3);
  n.position_embedding(8, 1) = position_value;
  krc::AttentionHead h;
  h.name = "copy a";
  h.query = single(3, 1, 0, 0, lambda);
  h.key = single(3, 1, 1, 0, 1);
  h.value = single(3, 1, 1, 0, 1);
  h.output = single(1, 3, 0, 2, 1);
  n.layers.push_back({"copy", {h}, std::nullopt});
  n.unembedding = single(3, 1, unembed, 0, 1);
  return n;
}

}  // namespace

TEST_CASE("gpt2 export: the exactness proof follows leaks to what reads them") {
  // e^-1 / 9: every weight is a normal float, so every value is on a coarse grid.
  CHECK(krc::gpt2_exactness(leaking(1, 2), 512).exact);
  // e^-100 / 9 is below 2^-125: the copied coordinate may hold any tiny float, and the
  // unembedding reads it through the final LayerNorm.
  const krc::Gpt2Exactness leak = krc::gpt2_exactness(leaking(100, 2), 512);
  CHECK_FALSE(leak.exact);
  CHECK(leak.reason.find("copied") != std::string::npos);
  CHECK(leak.reason.find("leaks") != std::string::npos);
  CHECK(leak.reason.find("the unembedding") != std::string::npos);
  // The same leak where nothing reads it afterwards: a rounded value that no weight reads
  // changes nothing.
  CHECK(krc::gpt2_exactness(leaking(100, 0), 512).exact);
  CHECK(krc::gpt2_exactness(leaking(1, 2), 512).norm_exponent == 30);
  // A coordinate reaching 2^22 at one position (and read by the head's key, so its weights
  // fall to e^-(2^22): a leak): the variance 2 * 2^44 / 512 = 2^36 passes 2^35, epsilon 4^30's
  // bound; a larger epsilon would absorb it, but not the leak.
  const krc::Gpt2Exactness both = krc::gpt2_exactness(leaking(1, 2, 0x1p22f), 512);
  CHECK_FALSE(both.exact);
  CHECK(both.reason.find("variance") != std::string::npos);
  CHECK(both.reason.find("leaks") != std::string::npos);  // what epsilon 4^63 still meets
  // 2^22 where no head reads it (the b token's copied coordinate): 4^31 proves it.
  krc::Network large = leaking(1, 2);
  large.token_embedding(2, 2) = 0x1p22f;
  const krc::Gpt2Exactness wide = krc::gpt2_exactness(large, 512);
  CHECK(wide.exact);
  CHECK(wide.norm_exponent == 31);
  CHECK(wide.largest >= 0x1p22);
  // 2^60: a variance of 2^113 passes even 2^101, epsilon 4^63's bound.
  large.token_embedding(2, 2) = 0x1p60f;
  const krc::Gpt2Exactness huge = krc::gpt2_exactness(large, 512);
  CHECK_FALSE(huge.exact);
  CHECK(huge.reason.find("variance") != std::string::npos);
  CHECK(huge.reason.find("4^63") != std::string::npos);
}

TEST_CASE("gpt2 export: an unprovable network is refused unless allowed, config.json last") {
  const krc::Network n = leaking(100, 2);
  CHECK_THROWS_AS(krc::gpt2_checkpoint(n, "leak", {}), krc::InputError);
  const krc::Gpt2Checkpoint c = krc::gpt2_checkpoint(n, "leak", {2LL << 30, true});
  CHECK_FALSE(c.exactness.exact);
  REQUIRE(c.files.size() == 5);
  CHECK(c.files.back().first == "config.json");
  CHECK(c.files[c.files.size() - 2].first == "krc_circuit.json");
  CHECK(c.files.front().first == "model.safetensors");
  CHECK(c.shape.n_embd == 512);
  CHECK(krc::gpt2_checkpoint(leaking(1, 2), "exact", {}).exactness.exact);
  CHECK_THROWS_AS(krc::gpt2_checkpoint(leaking(1, 2), "big", {1000, false}), krc::LimitError);
}

namespace {

// Residual: 0 a constant 1, 1 "the letter is a", 2 the head's output, 3 the position j. The
// head's score lambda * j picks the latest position (t itself) and beats every other key by
// lambda or more; it copies "is a", which is 0 at b's, so whatever leaks from earlier a's lies
// beside a copied 0. `overwrite`: an earlier layer's head writes coordinate 3, which then is no
// function of the position the proof may enumerate.
krc::Network latest(float lambda, bool overwrite) {
  krc::Network n = leaking(lambda, 2);
  n.residual_labels.push_back("position");
  n.token_embedding.conservativeResize(3, 4);
  n.token_embedding.col(3).setZero();
  n.position_embedding = krc::RowMatrix::Zero(9, 4);
  for (int p = 0; p < 9; ++p) n.position_embedding(p, 3) = static_cast<float>(p);
  krc::AttentionHead& h = n.layers[0].heads[0];
  h.query = single(4, 1, 0, 0, lambda);
  h.key = single(4, 1, 3, 0, 1);
  h.value = single(4, 1, 1, 0, 1);
  h.output = single(1, 4, 0, 2, 1);
  n.unembedding = single(4, 1, 2, 0, 1);
  if (overwrite) {
    krc::AttentionHead w = h;
    w.name = "writes the position";
    w.query = single(4, 1, 0, 0, 1);
    w.output = single(1, 4, 0, 3, 1);
    n.layers.insert(n.layers.begin(), krc::Layer{"write", {w}, std::nullopt});
  }
  return n;
}

}  // namespace

TEST_CASE("gpt2 export: a positional head that wins by 110 or more leaks exactly nothing") {
  // Gap 128: every other key's weight is float32's exp(-128) = 0, so the copy is exact.
  CHECK(krc::gpt2_exactness(latest(128, false), 512).exact);
  CHECK(krc::gpt2_exactness(latest(110.5f, false), 512).exact);
  // Gap 100: e^-100 is a subnormal's worth of leak, and the spread bound sees it.
  const krc::Gpt2Exactness weak = krc::gpt2_exactness(latest(100, false), 512);
  CHECK_FALSE(weak.exact);
  CHECK(weak.reason.find("leaks") != std::string::npos);
  // The same gap of 128, but the key reads a coordinate an earlier layer writes: not
  // enumerated, so the spread bound (128 * 8 plus what the write adds) refuses it.
  CHECK_FALSE(krc::gpt2_exactness(latest(128, true), 512).exact);
}

namespace {

// latest()'s network with kr's memory-head score: 128 (above * [letter j is a] + j), the key
// reading "is a" (a letter's value, in the value sets, no function of the position) beside the
// position. With above > max_len = 8 the latest a (or, with none, the latest position) beats
// every other key by 128 whatever the word (8 still does: the first a is at 1, BOS scores 0);
// with above <= 7 an a at j and a b at j + above tie.
krc::Network flagged(float above) {
  krc::Network n = latest(128, false);
  krc::AttentionHead& h = n.layers[0].heads[0];
  h.key = SparseMatrix(4, 1);
  h.key.insert(1, 0) = above;
  h.key.insert(3, 0) = 1;
  h.key.makeCompressed();
  return n;
}

}  // namespace

TEST_CASE("gpt2 export: a head whose key reads a flag in the value sets is proven by its gaps") {
  CHECK(krc::gpt2_exactness(flagged(16), 512).exact);
  CHECK(krc::gpt2_exactness(flagged(8), 512).exact);
  // Ties (an a at j scores as a b at j + 7 or j + 4): the enumeration refuses, the spread bound
  // sees leaks.
  for (float above : {7.0f, 4.0f}) {
    const krc::Gpt2Exactness tied = krc::gpt2_exactness(flagged(above), 512);
    CHECK_FALSE(tied.exact);
    CHECK(tied.reason.find("leaks") != std::string::npos);
  }
}

namespace {

// Residual: 0 a constant 1, 1 "the letter is a", 2 "the letter is b", 3 what the MLP writes. One
// hidden unit ReLU(is a + is b + bias) writes 2^60 times itself into coordinate 3: with bias -1
// it never fires (no letter is both), with bias 0 it fires at every letter.
krc::Network gated(float bias) {
  krc::Network n;
  n.max_len = 8;
  n.vocabulary = {"<bos>", "a", "b"};
  n.states = {"q"};
  n.residual_labels = {"constant", "is a", "is b", "gated"};
  n.token_embedding = krc::RowMatrix::Zero(3, 4);
  n.token_embedding.col(0).setOnes();
  n.token_embedding(1, 1) = 1;
  n.token_embedding(2, 2) = 1;
  n.position_embedding = krc::RowMatrix::Zero(9, 4);
  krc::Mlp m;
  m.in_weight = SparseMatrix(1, 4);
  m.in_weight.insert(0, 1) = 1;
  m.in_weight.insert(0, 2) = 1;
  m.in_weight.makeCompressed();
  m.in_bias = Eigen::VectorXf::Constant(1, bias);
  m.out_weight = single(4, 1, 3, 0, 0x1p60f);
  m.out_bias = Eigen::VectorXf::Zero(4);
  m.blocks = {{"gate", 0, 1, {}}};
  n.layers.push_back({"gate", {}, m});
  n.unembedding = single(4, 1, 3, 0, 1);
  return n;
}

}  // namespace

TEST_CASE("gpt2 export: value sets see a one-hot's exclusive coordinates, and what really occurs") {
  // Intervals give the unit [0, 1] and coordinate 3 [0, 2^60]; the letters' one value each
  // (a: 1, 0; b: 0, 1; BOS: 0, 0) give it exactly 0.
  const krc::Gpt2Exactness never = krc::gpt2_exactness(gated(-1), 512);
  CHECK(never.exact);
  CHECK(never.norm_exponent == 30);
  CHECK(never.largest == 1);  // the constant and the letters
  // With bias 0 it fires at every letter: 2^60 occurs, a variance of 2 * 2^120 / 512 = 2^112
  // that no epsilon up to 4^63 absorbs (2^101).
  const krc::Gpt2Exactness always = krc::gpt2_exactness(gated(0), 512);
  CHECK_FALSE(always.exact);
  CHECK(always.reason.find("variance") != std::string::npos);
  CHECK(always.largest == 0x1p60);
  // Position 0 (BOS) is followed apart from the letters' positions: 2^60 there alone is seen.
  krc::Network bos = gated(-1);
  bos.token_embedding(0, 3) = 0x1p60f;
  const krc::Gpt2Exactness first = krc::gpt2_exactness(bos, 512);
  CHECK_FALSE(first.exact);
  CHECK(first.reason.find("variance") != std::string::npos);
}

TEST_CASE("gpt2 export: the scan networks with --norm layernorm prove exact at max-len 1024") {
  // Refused before the value sets for the variance bound (interval bounds past 2^50); their
  // residuals hold one-hot or integer codes whose sums of squares are small.
  for (const char* family : {"abab", "gridworld", "alternating", "full_transformations"}) {
    CAPTURE(family);
    krc::CompileOptions options;
    options.strategy = krc::Strategy::Scan;
    options.max_len = 1024;
    options.norm = krc::Norm::LayerNorm;
    const krc::Network n = krc::compile(krc::zoo_automaton(family), options).network;
    const krc::Gpt2Exactness e = krc::gpt2_exactness(n, 512);
    CHECK_MESSAGE(e.exact, e.reason);
    CHECK(e.norm_exponent == 30);
    // Without the option the fetches leak, which no value set hides.
    options.norm = krc::Norm::None;
    const krc::Gpt2Exactness plain =
        krc::gpt2_exactness(krc::compile(krc::zoo_automaton(family), options).network, 512);
    CHECK_FALSE(plain.exact);
    CHECK(plain.reason.find("leaks") != std::string::npos);
  }
}
