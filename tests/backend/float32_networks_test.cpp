// What a plain float32 framework computes (Arithmetic::Float32: every product rounded to
// float32, every sum a float32 running sum, as PyTorch or numpy on a BLAS): every reference
// automaton, each strategy, at two max-lens on either side of the kr counters' switch from
// plain counts to blocks of sqrt(T) (kr_plan.cpp: plain while T <= 2048 and (p-1)T <= 6144),
// right at every position of random words of full length. The oracle is the automaton. The
// heavy tests (tests/heavy, tests/torch/float32) go to 16384 and 65536.
#include <doctest/doctest.h>

#include "krc/compile.hpp"
#include "krc/verifier.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

void check_float32(Strategy strategy) {
  for (const int max_len : {1536, 4096})
    for (const auto& name : test::reference_automaton_names()) {
      CAPTURE(name);
      CAPTURE(max_len);
      const Automaton a = test::reference_automaton(name);
      CompileOptions compile_options;
      compile_options.strategy = strategy;
      compile_options.max_len = max_len;
      const Network net = compile(a, compile_options).network;
      VerifyOptions options;
      options.forward.arithmetic = Arithmetic::Float32;
      options.exhaustive_length = 0;
      options.random_words = test::scaled(2);
      options.random_length = max_len;
      options.seed = 1000 + max_len;
      const VerifyReport report = verify(net, a, options);
      CAPTURE(format_report(report, a));
      CHECK(report.arithmetic == Arithmetic::Float32);
      CHECK(report.positions == test::scaled(2) * (max_len + 1));
      CHECK(report.ok());
    }
}

}  // namespace

TEST_CASE("float32: every reference automaton, scan, right at max-len 1536 and 4096") {
  check_float32(Strategy::Scan);
}

TEST_CASE("float32: every reference automaton, kr, right at max-len 1536 and 4096") {
  check_float32(Strategy::Kr);
}
