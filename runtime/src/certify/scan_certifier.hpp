#pragma once
// The certifier of scan networks (compiler/certify.md, obligations 1, 2, 4, 5, 6): one class,
// its members defined by concern:
//   scan_certifier.cpp  the run, the network's shape, the static (position) dimensions, the
//                       unembedding's margin;
//   scan_embedding.cpp  the embedding: the static part at every t, the letters' windows;
//   scan_fetch.cpp      the select heads (the target outscores every key) and what they add;
//   pairs_rule.cpp      the pairs rule: every MLP on every (fetched, current) pair of windows;
//   selector_layer.cpp  the selector rule's layers and unembedding (per state slot), over the
//                       bit checks of selector_rule.cpp.
//
// The invariant, checked layer by layer: after layer l, position t's residual is
//   static(t) + E_l(tau)
// where static(t) lives on the dimensions no head or MLP writes (the position codes, the
// constant, bos: a function of t alone, bounded for every t = 0..T), and E_l(tau) lives on the
// rest (the scan's slots) and depends only on tau, the transformation of the letters in the
// window (max(t - 2^(l+1), 0), t] the scan has composed so far (at t = 0: the identity, held
// by BOS, tracked apart). E_l is a table of intervals over the transformations reachable as
// such windows: the letters at the embedding, then every x;y with x a window (or BOS's
// identity) and y a window, a superset of what occurs. Every bound holds for every t, so the
// cost is |domain|^2 evaluations of each MLP and T^2/2 scores per head, never |letters|^T.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "certify/interval.hpp"
#include "certify/selector_rule.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/runtime/certify.hpp"
#include "krc/runtime/network.hpp"

namespace krc::certify_detail {

using Vec = std::vector<bounds::Interval>;
using Tau = std::vector<StateId>;

// A transformation as text: "(q0->f(q0) q1->f(q1) ...)".
inline std::string tau_text(const Automaton& a, const Tau& tau) {
  std::string s = "(";
  for (std::size_t q = 0; q < tau.size(); ++q) {
    if (q) s += " ";
    s += a.state_name(q) + "->" + a.state_name(tau[q]);
  }
  return s + ")";
}

class ScanCertifier {
 public:
  ScanCertifier(const Network& network, const Automaton& automaton, const CertifyOptions& o);
  CertifyResult run();

 private:
  // scan_certifier.cpp
  void check_shape();
  void find_static_dimensions();
  void check_head_reads();
  std::vector<int> static_reads(const Mlp& m) const;
  static std::string part_name(const Mlp& m);
  std::vector<int> unembedding_reads() const;
  void check_answer(const Vec& x, int answer, const std::string& at_text, const std::string& lead,
                    std::string& at);

  // scan_embedding.cpp
  void embedding(nlohmann::json& obligations);
  void static_part();
  void letters_windows();
  void record_domain(int layer);
  static Vec joined(const Vec& a, const Vec& b);

  // scan_fetch.cpp
  std::pair<bounds::Interval, double> fetch_weights(int l, nlohmann::json& obligation);
  std::vector<Vec> projected(const SparseMatrix& m) const;
  Vec fetched(int l, const Vec& x, bounds::Interval p, double others,
              const std::vector<double>& bound) const;
  std::map<std::vector<double>, int> static_patterns(const std::vector<int>& read, int layer,
                                                     const std::string& part, int from = 1) const;

  // pairs_rule.cpp
  void layer(int l, nlohmann::json& obligations);
  void check_pair_cost(int l, std::size_t patterns) const;
  std::vector<double> value_bound(int l) const;
  Vec mlp(int l, const Vec& in) const;
  void check_encoding(int l, const Tau& tau, const Vec& v, const std::string& what);
  std::string block_writing(int l, int dim) const;
  std::map<Tau, Vec> compose_windows(int l, const std::vector<std::pair<Tau, Vec>>& fetches,
                                     const std::map<std::vector<double>, int>& patterns) const;
  Vec residual_after(int l, int t, const Vec& y, const Vec& add) const;
  void unembedding(nlohmann::json& obligations);

  // selector_layer.cpp
  void slot_sets_from_embedding();
  std::vector<double> value_bound_of(int l, const Vec& x) const;
  Vec hull_residual() const;
  std::vector<Vec> patterns_read(const std::vector<int>& read, int layer,
                                 const std::string& part) const;
  PreMlp pre_mlp(int l, bounds::Interval p, double others) const;
  void selector_layer(int l, nlohmann::json& obligations);
  void selector_unembedding(nlohmann::json& obligations);

  const Network& original_;
  const Automaton& a_;
  Arithmetic arithmetic_;  // as asked; the certificate names it
  bounds::Format format_;
  long long max_domain_;
  bool selector_;                                    // the rule: per slot, not per pair
  std::optional<SlotLayout> slots_;                  // the selector rule's slots
  std::vector<std::vector<bounds::Interval>> sets_;  // the selector rule's value sets per dimension
  Network net_;
  int t_max_ = 0, d_ = 0;
  std::vector<char> static_;    // per residual dimension: written by no layer
  std::vector<Vec> static_at_;  // [t]: the static part at t (data dimensions unused)
  Vec bos_;                     // the window part at t = 0
  Tau identity_;
  std::map<Tau, Vec> domain_;     // window transformation -> its encoding's bounds
  std::map<Tau, Vec> reference_;  // the encoding when each transformation was first seen
  nlohmann::json invariant_ = nlohmann::json::array();
  double margin_ = 0.0;
};

}  // namespace krc::certify_detail
