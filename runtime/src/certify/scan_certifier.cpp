// The scan certifier's run (scan_certifier.hpp): the claim, the network's shape (a scan
// step per layer, the static dimensions and who reads them), then the embedding, the layers
// under the rule asked and the unembedding; `certify` picks the rule.
#include "certify/scan_certifier.hpp"

#include <stdexcept>

#include "certify/certify_common.hpp"
#include "certify/kr_certifier.hpp"

namespace krc {

namespace certify_detail {

namespace {

void round_matrix(SparseMatrix& m, bounds::Format f) {
  for (int k = 0; k < m.nonZeros(); ++k)
    m.valuePtr()[k] = static_cast<float>(bounds::round_to(f, m.valuePtr()[k]));
}

template <class Dense>
void round_dense(Dense& m, bounds::Format f) {
  for (Eigen::Index k = 0; k < m.size(); ++k)
    m.data()[k] = static_cast<float>(bounds::round_to(f, m.data()[k]));
}

// The network as the arithmetic holds it: every weight rounded once (runtime/README.md,
// "bf16 and fp16"); float32 leaves it unchanged.
Network rounded(const Network& n, bounds::Format f) {
  Network r = n;
  if (f == bounds::Format::Float32) return r;
  round_dense(r.token_embedding, f);
  round_dense(r.position_embedding, f);
  round_matrix(r.unembedding, f);
  for (Layer& layer : r.layers) {
    for (AttentionHead& h : layer.heads) {
      round_matrix(h.query, f);
      round_matrix(h.key, f);
      round_matrix(h.value, f);
      round_matrix(h.output, f);
    }
    if (layer.mlp) {
      round_matrix(layer.mlp->in_weight, f);
      round_matrix(layer.mlp->out_weight, f);
      round_dense(layer.mlp->in_bias, f);
      round_dense(layer.mlp->out_bias, f);
    }
  }
  r.attention_scale = static_cast<float>(bounds::round_to(f, r.attention_scale));
  return r;
}

nlohmann::json claim_of(int t_max, Arithmetic arithmetic, const Automaton& a, bool selector) {
  return {{"max_len", t_max},
          {"arithmetic", krc::to_string(arithmetic)},
          {"summation", "any order"},
          {"automaton", a.name()},
          {"states", a.state_count()},
          {"statement",
           "for every word of length <= max_len and every position t, the "
           "argmax of the logits is the automaton's state after t letters"},
          {"rule", selector ? "selector" : "pairs"}};
}

}  // namespace

ScanCertifier::ScanCertifier(const Network& network, const Automaton& automaton,
                             const CertifyOptions& o)
    : original_(network),
      a_(automaton),
      arithmetic_(o.arithmetic),
      format_(bounds::format_of(o.arithmetic)),
      max_domain_(o.max_domain),
      selector_(o.rule == CertifyRule::Selector),
      net_(rounded(network, format_)) {
  t_max_ = o.max_len.value_or(network.max_len);
  d_ = net_.d_model();
}

CertifyResult ScanCertifier::run() {
  CertifyResult result;
  nlohmann::json& c = result.certificate;
  c["claim"] = claim_of(t_max_, arithmetic_, a_, selector_);
  c["assumptions"] = {"round to nearest, ties to even", "exp(x) within 2 ulp of e^x, exp(0) = 1",
                      "no TF32 (float32 products of float32 factors)",
                      "fused multiply-adds allowed (the bounds hold for any summation order)"};
  c["obligations"] = nlohmann::json::array();
  try {
    check_shape();
    if (selector_) {
      slots_ = binary_slots(net_, a_);
      if (!slots_)
        throw std::invalid_argument(
            "the selector rule covers binary-coordinate scans of the automaton's states "
            "(compiled with --precision bf16 or fp16 where that form is the smaller); this "
            "network's scan is in another form: use --rule pairs");
    }
    embedding(c["obligations"]);
    if (selector_) slot_sets_from_embedding();
    for (int l = 0; l < static_cast<int>(net_.layers.size()); ++l)
      selector_ ? selector_layer(l, c["obligations"]) : layer(l, c["obligations"]);
    selector_ ? selector_unembedding(c["obligations"]) : unembedding(c["obligations"]);
    c["claim"]["margin"] = margin_;
  } catch (const Refused& r) {
    result.refusal = r.refusal;
  }
  c["invariant"] = invariant_;
  return result;
}

void ScanCertifier::check_shape() {
  const std::string strategy = original_.compiler.value("strategy", std::string());
  if (strategy != "scan")
    throw std::invalid_argument("certify covers scan networks only (this file's strategy is '" +
                                (strategy.empty() ? std::string("unknown") : strategy) +
                                "'); onelayer and exports are not built yet");
  if (net_.states != a_.states())
    throw std::invalid_argument(
        "the network's logits are not the automaton's states (an output kind): not covered yet");
  // Two MLP layers a step, and a code that is not of constant norm: the selector and pairs
  // rules do not cover it yet (compiler/README.md "scan, digit coordinates" argues it exact).
  const auto scan = original_.compiler.find("scan");
  if (scan != original_.compiler.end() && scan->is_object() &&
      scan->value("form", std::string()) == "digit coordinates")
    throw std::invalid_argument(
        "scan networks in digit coordinates (two MLP layers a step) are not covered yet; "
        "krc verify checks them");
  if (t_max_ < 0 || t_max_ > net_.max_len)
    throw std::invalid_argument("--max-len " + std::to_string(t_max_) +
                                " is past the network's max_len " + std::to_string(net_.max_len) +
                                " (no position row for it)");
  if (!(net_.attention_scale > 0.0f))
    throw std::invalid_argument("attention scale " + number(net_.attention_scale) +
                                " is not positive");
  const int layers = static_cast<int>(net_.layers.size());
  if (layers < 31 && (1LL << layers) < t_max_)
    refuse(layers, "scan",
           std::to_string(layers) + " steps compose windows of 2^" + std::to_string(layers) +
               " = " + std::to_string(1LL << layers) + " letters, fewer than max-len " +
               std::to_string(t_max_));
  for (int l = 0; l < layers; ++l) {
    const Layer& layer = net_.layers[l];
    if (layer.heads.size() != 1 || layer.heads[0].kind != HeadKind::Select ||
        layer.heads[0].role.kind != RoleKind::ScanFetch || layer.heads[0].role.step != l + 1 ||
        !layer.mlp)
      throw std::invalid_argument("layer " + std::to_string(l) +
                                  " is not a scan step (one select head 'scan fetch' of step " +
                                  std::to_string(l + 1) + " and an MLP)");
  }
  find_static_dimensions();
  check_head_reads();
}

// Static dimensions: written by no head and no MLP.
void ScanCertifier::find_static_dimensions() {
  static_ = written_dimensions(net_);
  for (char& s : static_) s = !s;
}

// The query and key read static dimensions only (the score is a function of (t, s)); the
// value written ones only (the fetched value is a function of the window).
void ScanCertifier::check_head_reads() {
  auto reads = [&](const SparseMatrix& m, bool want_static, int layer, const std::string& part,
                   const char* what) {
    for (int r = 0; r < m.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(m, r); it; ++it)
        if (it.value() != 0.0f && static_cast<bool>(static_[r]) != want_static)
          refuse(layer, part,
                 std::string(what) + " reads residual dimension " + std::to_string(r) + " '" +
                     net_.residual_labels[r] + "', which is " +
                     (want_static ? "written by a layer" : "a function of the position") +
                     ": the score would not be a function of (t, s) alone, or the fetched "
                     "value not a function of the window");
  };
  for (int l = 0; l < static_cast<int>(net_.layers.size()); ++l) {
    const AttentionHead& h = net_.layers[l].heads[0];
    reads(h.query, true, l, h.name, "the query");
    reads(h.key, true, l, h.name, "the key");
    reads(h.value, false, l, h.name, "the value");
  }
}

// The static dimensions an MLP reads, in the order its units first read them.
std::vector<int> ScanCertifier::static_reads(const Mlp& m) const {
  std::vector<int> read;
  std::vector<char> seen(d_, 0);
  for (int u = 0; u < m.in_weight.outerSize(); ++u)
    for (SparseMatrix::InnerIterator it(m.in_weight, u); it; ++it)
      if (static_[it.col()] && !seen[it.col()]) seen[it.col()] = 1, read.push_back(it.col());
  return read;
}

// The name a refusal of a whole MLP gives: its first block's.
std::string ScanCertifier::part_name(const Mlp& m) {
  return m.blocks.empty() ? std::string("mlp") : m.blocks.front().name;
}

// The static dimensions the unembedding reads.
std::vector<int> ScanCertifier::unembedding_reads() const {
  std::vector<int> read;
  for (int r = 0; r < net_.unembedding.outerSize(); ++r)
    if (static_[r] && SparseMatrix::InnerIterator(net_.unembedding, r)) read.push_back(r);
  return read;
}

// The logit of `answer` on the residual `x` must be above every other's; the least gap is
// the margin (`at` names where, as `at_text`). A refusal says `lead`, the answer's logit and
// the other's.
void ScanCertifier::check_answer(const Vec& x, int answer, const std::string& at_text,
                                 const std::string& lead, std::string& at) {
  const int states = static_cast<int>(net_.unembedding.cols());
  std::vector<bounds::Accumulator> acc(states);
  for (int r = 0; r < net_.unembedding.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(net_.unembedding, r); it; ++it)
      acc[it.col()].add(it.value(), x[r]);
  const bounds::Interval right = bounds::store(format_, acc[answer].result());
  for (int s = 0; s < states; ++s) {
    if (s == answer) continue;
    const bounds::Interval other = bounds::store(format_, acc[s].result());
    const double gap = right.lo - other.hi;
    if (gap < margin_) margin_ = gap, at = at_text;
    if (gap <= 0.0)
      refuse(static_cast<int>(net_.layers.size()), "unembedding",
             lead + interval_text(right) + ", not above " + a_.state_name(s) + "'s " +
                 interval_text(other));
  }
}

}  // namespace certify_detail

CertifyResult certify(const Network& network, const Automaton& automaton,
                      const CertifyOptions& options) {
  using certify_detail::ScanCertifier;
  if (network.compiler.value("strategy", std::string()) == "kr")
    return certify_detail::KrCertifier(network, automaton, options).run();
  CertifyResult result = ScanCertifier(network, automaton, options).run();
  // Auto: the pairs rule when it decides; the selector rule where it is undecided (too many
  // window transformations) and the scan is in binary coordinates.
  if (options.rule == CertifyRule::Auto && result.refusal && result.refusal->undecided &&
      certify_detail::binary_slots(network, automaton)) {
    CertifyOptions selector = options;
    selector.rule = CertifyRule::Selector;
    return ScanCertifier(network, automaton, selector).run();
  }
  return result;
}

}  // namespace krc
