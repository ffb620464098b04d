#pragma once
// `krc certify`: a proof, not a test, that a network computes its automaton on every word up
// to a length (compiler/certify.md). For a scan network it propagates sound bounds on every
// residual value through the layers: the position part of the residual is a function of t
// alone and is bounded for every t; the rest (the scan's slots) is a function of the
// transformation of the window the layer has composed, and is bounded for every such
// transformation, which the certifier enumerates from the automaton (the monoid, at most
// CertifyOptions::max_domain elements). Cost: polynomial in the monoid and max-len, never
// in the number of words.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

// How an MLP block's obligation is checked (compiler/certify.md):
//  - Pairs: every (fetched, current) pair of window transformations, |M|^2 a layer; any scan
//    form, re-checked by tools/check_certificate.py;
//  - Selector: per state slot, the binary-coordinate form only: slot q encodes f(q), and for
//    every written bit (q, i) and every state s the fetched slot q may name, the new bit is
//    y(s)_i; n^2 b evaluations a layer; re-checked by tools/check_certificate.py its own way
//    (n^2 rows of the whole MLP: small networks only);
//  - Auto: Pairs, and Selector when Pairs is undecided (too many transformations) on a
//    binary-coordinate network.
enum class CertifyRule { Auto, Pairs, Selector };

struct CertifyOptions {
  Arithmetic arithmetic = Arithmetic::Float32;  // float32, bf16 or fp16
  std::optional<int> max_len;                   // default: the network's
  long long max_domain = 4096;                  // transformations per layer before refusing
  CertifyRule rule = CertifyRule::Auto;
};

// Why a network is not certified: the layer (-1: the embedding; n_layers: the unembedding),
// the part (a head's or MLP's name, or "embedding"/"unembedding") and what failed, with the
// values (t, s, the transformations).
struct CertifyRefusal {
  int layer = -1;
  std::string part;
  std::string reason;
  bool undecided = false;  // past a cost limit, or an obligation not built (kr past its heads):
                           // no obligation failed, this one could not be checked
};

struct CertifyResult {
  std::optional<CertifyRefusal> refusal;  // empty: certified
  nlohmann::json certificate;             // the claim and its obligations (also on refusal:
                                          // the obligations proved before it)
  bool certified() const { return !refusal.has_value(); }
};

// kr networks: the heads' obligations only (compiler/certify.md, "What is built"); past them
// the result is an undecided refusal naming the first part not built, never a certificate.
// Throws std::invalid_argument when the network is not something the certifier covers (not
// a scan or kr network, a kr network in another arithmetic than float32, an arithmetic it does not
// prove, a max-len past the network's, the selector rule asked of a network that is not in binary
// coordinates): not a refusal of the weights, a question it cannot answer.
CertifyResult certify(const Network& network, const Automaton& automaton,
                      const CertifyOptions& options);

// Lowercase hex SHA-256 (FIPS 180-4) of a file's bytes: the certificate names the weights it
// proves by their digest, so that a checker refuses it for any other file. Throws
// std::runtime_error when the file cannot be read.
std::string sha256_of_file(const std::string& path);

// The text report: what is claimed and each obligation's figure, or the refusal.
std::string format_certify_report(const CertifyResult& result);

}  // namespace krc
