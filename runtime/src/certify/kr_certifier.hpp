#pragma once
// The certifier of kr networks (compiler/certify.md, "kr and walk networks: the design"),
// built as far as the heads' obligations (step (a) of issue 36's kr work):
//   kr_certifier.cpp  the run, the network's shape, the residual's static dimensions
//                     (functions of t alone) and its letter groups (functions of the letter
//                     alone: written by the embedding and no layer);
//   kr_heads.cpp      the head obligations, over every query t <= T, every key s <= t and
//                     every value v of the one letter group the key may read (T^2 |V|):
//                     select heads (the argmax key is unique for every word, with the least
//                     gap and the weight off it) and whole-sum average heads (the count is
//                     the integer sum of the increments within eps(t) < 3/8, the combs'
//                     tolerance).
// Not built: the MLP (comb, lookup, walk decoder) obligations, the residual adds and the
// unembedding (steps (b) and (c)); a network whose heads hold is refused as undecided at its
// first part past the heads, naming it, so that no network is claimed certified that those
// obligations would have had to cover.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "certify/interval.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/runtime/certify.hpp"
#include "krc/runtime/network.hpp"

namespace krc::certify_detail {

// The combs read a count within 3/8 of its integer (README §3's quarter grid, the design's
// whole-sum bound): an average head's eps(t) must stay below it.
constexpr double kCountTolerance = 0.375;

class KrCertifier {
 public:
  KrCertifier(const Network& network, const Automaton& automaton, const CertifyOptions& o);
  CertifyResult run();

 private:
  // kr_certifier.cpp
  void check_shape();
  void find_dimensions();
  std::vector<int> reads(const SparseMatrix& m) const;
  std::string dimension_text(int r) const;
  std::vector<double> residual(int token, int t) const;  // the embedding's, as float32 sums
  void refuse_past_heads();

  // kr_heads.cpp
  struct KeyValues {
    std::vector<int> tokens;  // one letter per distinct value of the group the key reads
    std::string group;        // its subspace's name ("" when the key reads static ones only)
  };
  KeyValues key_values(int l, const AttentionHead& h) const;
  std::vector<bounds::Interval> scores(const AttentionHead& h, const KeyValues& kv, int t) const;
  void select_head(int l, const AttentionHead& h, nlohmann::json& obligations) const;
  struct WholeSum {
    std::vector<int> written;                  // the residual dimensions the head writes
    std::vector<std::vector<double>> running;  // [head dim][t]: sum over s <= t of max |value|
    nlohmann::json increments;                 // letter -> its increment
  };
  WholeSum whole_sum_values(int l, const AttentionHead& h) const;
  void average_head(int l, const AttentionHead& h, nlohmann::json& obligations) const;

  const Network& net_;
  const Automaton& a_;
  int t_max_ = 0, d_ = 0;
  std::vector<char> written_;  // per residual dimension: some head or MLP writes it
  std::vector<char> letter_;   // per residual dimension: unwritten, but differs between letters
};

}  // namespace krc::certify_detail
