// krc certify on scan networks (compiler/certify.md): it proves compiled networks, and it
// refuses planted one-ulp faults naming the layer that holds them. The oracle of "right" is
// the automaton (every certified network is also run by the verifier on words of its own);
// the oracle of "wrong" is the fault's place, chosen by the test.
#include "krc/runtime/certify.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/verifier.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

Network scan_network(const Automaton& a, int max_len, Precision precision = Precision::Float32) {
  CompileOptions options;
  options.strategy = Strategy::Scan;
  options.max_len = max_len;
  options.precision = precision;
  return compile(a, options).network;
}

CertifyResult certify_in(const Network& n, const Automaton& a, Arithmetic arithmetic) {
  CertifyOptions options;
  options.arithmetic = arithmetic;
  return certify(n, a, options);
}

// "cyclic_3" -> the family cyclic with n = 3; "abab" -> abab.
Automaton zoo(const std::string& name) {
  const auto cut = name.rfind('_');
  if (cut != std::string::npos &&
      name.find_first_not_of("0123456789", cut + 1) == std::string::npos)
    return zoo_automaton(name.substr(0, cut), std::stoi(name.substr(cut + 1)));
  return zoo_automaton(name);
}

float one_ulp_up(float x) { return std::nextafter(x, std::numeric_limits<float>::infinity()); }

// The first nonzero value of a sparse matrix, to plant a fault in.
float& first_nonzero(SparseMatrix& m) {
  for (int k = 0; k < m.nonZeros(); ++k)
    if (m.valuePtr()[k] != 0.0f) return m.valuePtr()[k];
  FAIL("no nonzero entry");
  return m.valuePtr()[0];
}

}  // namespace

TEST_CASE("certify: zoo scan networks in float32 are certified, and the verifier agrees") {
  for (const std::string family : {"parity", "cyclic_3", "flipflop_2", "abab", "dihedral_3"}) {
    CAPTURE(family);
    const Automaton a = zoo(family);
    const Network n = scan_network(a, 64);
    const CertifyResult r = certify_in(n, a, Arithmetic::Float32);
    INFO((r.refusal ? r.refusal->reason : std::string()));
    CHECK(r.certified());
    // The one-hot and integer decodes' margins are 1 (README §5): within the softmax's leaks.
    CHECK(r.certificate["claim"]["margin"].get<double>() == doctest::Approx(1.0).epsilon(1e-6));
    VerifyOptions v;
    v.random_words = 20;
    CHECK(verify(n, a, v).ok());
  }
}

TEST_CASE("certify: a random automaton the other tests do not use, and long max-lens") {
  std::mt19937_64 rng(3606);
  const Automaton a = test::random_automaton(rng, 4, 3);
  CAPTURE(a.state_count());
  const Network n = scan_network(a, 256);
  const CertifyResult r = certify_in(n, a, Arithmetic::Float32);
  INFO((r.refusal ? r.refusal->reason : std::string()));
  CHECK(r.certified());
  const Automaton parity = zoo_automaton("parity");
  // The fetch margins cost T^2/2 scores a layer: 1024 in Release (about 2 s), 256 in the
  // Debug+ASan lane, which runs every runtime test 20-50x slower.
#ifdef NDEBUG
  const int long_len = 1024;
#else
  const int long_len = 256;
#endif
  const CertifyResult long_one =
      certify_in(scan_network(parity, long_len), parity, Arithmetic::Float32);
  CHECK(long_one.certified());
  // Every fetch wins by 2 lambda = 40 (README §3), whatever the length.
  for (const auto& o : long_one.certificate["obligations"])
    if (o["kind"] == "select") CHECK(o["min_gap"].get<double>() == doctest::Approx(40.0));
}

TEST_CASE("certify: bf16 and fp16, one-hot and binary coordinates, in the format compiled for") {
  for (const std::string family : {"cyclic_3", "gridworld_4"}) {
    CAPTURE(family);
    const Automaton a = zoo(family);
    for (auto [precision, arithmetic] : {std::pair{Precision::BFloat16, Arithmetic::BFloat16},
                                         std::pair{Precision::Float16, Arithmetic::Float16}}) {
      const Network n = scan_network(a, 64, precision);
      const CertifyResult r = certify_in(n, a, arithmetic);
      INFO((r.refusal ? r.refusal->reason : std::string()));
      CHECK(r.certified());
    }
  }
}

TEST_CASE("certify: one-ulp faults are refused, naming the layer that holds them") {
  const Automaton a = zoo("cyclic_3");
  const Network clean = scan_network(a, 64);
  REQUIRE(certify_in(clean, a, Arithmetic::Float32).certified());
  const int faulty = 2;
  SUBCASE("an MLP output weight") {
    Network n = clean;
    float& w = first_nonzero(n.layers[faulty].mlp->out_weight);
    w = one_ulp_up(w);
    const CertifyResult r = certify_in(n, a, Arithmetic::Float32);
    REQUIRE(!r.certified());
    CHECK(r.refusal->layer == faulty);
    CHECK(r.refusal->part.find("scan step 3") != std::string::npos);
  }
  SUBCASE("an MLP bias") {
    Network n = clean;
    float& b = n.layers[faulty].mlp->in_bias[0];
    b = one_ulp_up(b);
    // A hidden unit's bias one ulp off still fires 0 or 1 (margin 1/2) only when its
    // pre-activation is not already at a kink: the one-hot compose's -3 + 4 = 1 becomes
    // 1 + 2^-22, and the write carries it.
    const CertifyResult r = certify_in(n, a, Arithmetic::Float32);
    REQUIRE(!r.certified());
    CHECK(r.refusal->layer == faulty);
  }
  SUBCASE("a select head whose scale no longer separates the target") {
    Network n = clean;
    for (int k = 0; k < n.layers[faulty].heads[0].query.nonZeros(); ++k)
      n.layers[faulty].heads[0].query.valuePtr()[k] *= 0.05f;  // lambda 20 -> 1: gap 2
    const CertifyResult r = certify_in(n, a, Arithmetic::Float32);
    REQUIRE(!r.certified());
    CHECK(r.refusal->layer == faulty);
  }
}

TEST_CASE("certify: what it does not cover is refused as a question, not as a wrong network") {
  const Automaton a = zoo_automaton("parity");
  CompileOptions onelayer;
  onelayer.strategy = Strategy::OneLayer;
  onelayer.max_len = 16;
  CHECK_THROWS_AS(certify(compile(a, onelayer).network, a, {}), std::invalid_argument);
  CertifyOptions past;
  past.max_len = 65;
  CHECK_THROWS_AS(certify(scan_network(a, 64), a, past), std::invalid_argument);
  CertifyOptions f64;
  f64.arithmetic = Arithmetic::Float64;
  CHECK_THROWS_AS(certify(scan_network(a, 16), a, f64), std::invalid_argument);
}

TEST_CASE("certify: SHA-256 of a file matches FIPS 180-4's examples") {
  test::TempDir dir;
  CHECK(sha256_of_file(test::write_file(dir, "abc", "abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_of_file(test::write_file(dir, "empty", "")) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_of_file(test::write_file(
            dir, "two", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}
