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
//   kr_points.cpp     steps (b) and (c) for networks whose heads are all whole sums of letter
//                     increments (parity, cyclic_p): every prefix is summarised by (its state,
//                     each count's integer, its last letter), the summaries reachable within
//                     max-len are enumerated from the automaton, and the MLPs (residue combs),
//                     the residual adds and the unembedding are evaluated on each, the count an
//                     interval of width 2 eps around its integer and every rounding of it the
//                     combs' units can see enumerated; every comb output must be an exact integer
//                     and the argmax the summary's state.
// Not built: select heads' copies (memory units), counts whose increments an MLP writes,
// lookups and the walk's decoder; such a network is refused as undecided at the first part
// not covered, naming it.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
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

  // kr_points.cpp
  struct Count {
    int layer = 0, dim = 0;
    std::vector<long> increment;  // per token (BOS's 0)
    double eps = 0.0;             // the head's largest eps(t)
  };
  struct Summary {
    int state = 0, token = 0;
    std::vector<long> z;  // per count
  };
  std::vector<Summary> summaries() const;
  void check_points_support() const;
  void set_counts(const Summary& s, int layer, std::vector<bounds::Interval>& x) const;
  void check_points_parts() const;
  // kr_mlp.cpp: layer l's MLP on one summary's residual: (dimension, value) written.
  std::vector<std::pair<int, double>> mlp_written(int l, const std::vector<bounds::Interval>& x,
                                                  const std::string& at, long long& cases) const;
  std::vector<std::pair<int, double>> mlp_outputs(int l, std::vector<float>& h,
                                                  const std::vector<std::vector<int>>& units,
                                                  const std::vector<std::vector<float>>& values,
                                                  const std::string& at, long long& cases) const;
  std::string block_of_unit(int l, int u) const;
  void check_points(nlohmann::json& certificate);
  std::string block_of(int l, int dim) const;

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
    std::vector<std::vector<long>> per_dim;    // [written dim][token]: the increment
  };
  WholeSum whole_sum_values(int l, const AttentionHead& h) const;
  void average_head(int l, const AttentionHead& h, nlohmann::json& obligations);

  const Network& net_;
  const Automaton& a_;
  int t_max_ = 0, d_ = 0;
  std::vector<char> written_;  // per residual dimension: some head or MLP writes it
  std::vector<char> letter_;   // per residual dimension: unwritten, but differs between letters
  std::vector<Count> counts_;  // the whole-sum heads' counts, in layer order
};

}  // namespace krc::certify_detail
