// The kr certifier's run (kr_certifier.hpp): the claim, the network's shape and its residual
// dimensions, then every head's obligation, then the refusal at the first part that is not
// built (an MLP block, or the unembedding).
#include "certify/kr_certifier.hpp"

#include <optional>
#include <stdexcept>

#include "certify/certify_common.hpp"

namespace krc::certify_detail {

KrCertifier::KrCertifier(const Network& network, const Automaton& automaton,
                         const CertifyOptions& o)
    : net_(network), a_(automaton) {
  if (o.arithmetic != Arithmetic::Float32)
    throw std::invalid_argument(
        "kr networks are compiled for float32 only (their counts and combs are not exact in " +
        std::string(krc::to_string(o.arithmetic)) + "): certify them with --arithmetic float32");
  t_max_ = o.max_len.value_or(network.max_len);
  d_ = network.d_model();
}

CertifyResult KrCertifier::run() {
  CertifyResult result;
  nlohmann::json& c = result.certificate;
  c["claim"] = {{"strategy", "kr"},
                {"max_len", t_max_},
                {"arithmetic", "float32"},
                {"summation", "any order"},
                {"automaton", a_.name()},
                {"states", a_.state_count()},
                {"statement",
                 "for every word of length <= max_len and every position t, the "
                 "argmax of the logits is the automaton's state after t letters"}};
  c["assumptions"] = {"round to nearest, ties to even", "exp(x) within 2 ulp of e^x, exp(0) = 1",
                      "no TF32 (float32 products of float32 factors)",
                      "fused multiply-adds allowed (the bounds hold for any summation order)",
                      "softmax weights as e/S, e*(1/S), or the weighted sum divided by S"};
  c["obligations"] = nlohmann::json::array();
  try {
    check_shape();
    // Every head reads the embedding's groups only (or is undecided), so each is checked on
    // its own: past an undecided head the others are still checked, and a failed one stops.
    std::optional<Refused> first_undecided;
    for (int l = 0; l < static_cast<int>(net_.layers.size()); ++l) {
      for (const AttentionHead& h : net_.layers[l].heads) {
        try {
          h.kind == HeadKind::Select ? select_head(l, h, c["obligations"])
                                     : average_head(l, h, c["obligations"]);
        } catch (const Refused& r) {
          if (!r.refusal.undecided) throw;
          if (!first_undecided) first_undecided = r;
        }
      }
    }
    if (first_undecided) throw *first_undecided;
    check_points(c);
  } catch (const Refused& r) {
    result.refusal = r.refusal;
  }
  return result;
}

void KrCertifier::check_shape() {
  if (net_.states != a_.states())
    throw std::invalid_argument(
        "the network's logits are not the automaton's states (an output kind): not covered yet");
  if (t_max_ < 0 || t_max_ > net_.max_len)
    throw std::invalid_argument("--max-len " + std::to_string(t_max_) +
                                " is past the network's max_len " + std::to_string(net_.max_len) +
                                " (no position row for it)");
  if (!(net_.attention_scale > 0.0f))
    throw std::invalid_argument("attention scale " + number(net_.attention_scale) +
                                " is not positive");
  if (net_.vocabulary.size() < 2)
    throw std::invalid_argument("the network has no letters: nothing to certify");
  find_dimensions();
}

// Written: some head's output or some MLP's output (weight or bias) reaches it. Letter
// dimensions: written by no layer, but the letters' token rows differ there (a function of
// the letter alone); the rest are static (a function of t alone: BOS's row holds only at t = 0).
void KrCertifier::find_dimensions() {
  written_ = written_dimensions(net_);
  letter_.assign(d_, 0);
  const int tokens = static_cast<int>(net_.token_embedding.rows());
  for (int r = 0; r < d_; ++r)
    for (int a = 2; a < tokens && !written_[r]; ++a)
      if (net_.token_embedding(a, r) != net_.token_embedding(1, r)) letter_[r] = 1;
}

// The residual dimensions a matrix reads (its nonzero rows).
std::vector<int> KrCertifier::reads(const SparseMatrix& m) const {
  std::vector<char> seen(d_, 0);
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      if (it.value() != 0.0f) seen[r] = 1;
  std::vector<int> out;
  for (int r = 0; r < d_; ++r)
    if (seen[r]) out.push_back(r);
  return out;
}

std::string KrCertifier::dimension_text(int r) const {
  const std::string label =
      r < static_cast<int>(net_.residual_labels.size()) ? net_.residual_labels[r] : "";
  return "residual dimension " + std::to_string(r) + (label.empty() ? "" : " '" + label + "'");
}

// The residual before layer 0 at position t holding `token`: the runtime's float32 sum of the
// token's and the position's rows (one rounding: both are float32).
std::vector<double> KrCertifier::residual(int token, int t) const {
  std::vector<double> x(d_);
  for (int r = 0; r < d_; ++r)
    x[r] = static_cast<float>(static_cast<double>(net_.token_embedding(token, r)) +
                              static_cast<double>(net_.position_embedding(t, r)));
  return x;
}

}  // namespace krc::certify_detail
