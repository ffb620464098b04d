// Steps (b) and (c) of the kr certifier (kr_certifier.hpp; compiler/certify.md, "kr: the
// counters' combs and the unembedding (built)") for networks whose heads are all whole sums of
// letter increments. A prefix w[1..t] is summarised by sigma = (the automaton's state after it,
// each count's integer z = sum of its letters' increments, its last token). Every residual
// dimension the MLPs and the unembedding read is then a function of sigma: the static and
// letter ones (checked the same at every t >= 1), the counts (a float32 within eps of z, by the
// heads' obligations), and what the MLPs write from them. The summaries reachable from
// (q0, 0, BOS) within max-len are enumerated (a superset: the counts are bounded, not t), and
// each is carried through the network: every MLP unit's products summed in any order, its
// bias added last (the combs' quarter grid needs that order: certify.md, network obligation
// 5), every float32 rounding of the count a unit can see enumerated, the outputs checked exact
// integers (a one-hot, an increment) whatever rounding occurred, and the logits' argmax
// checked to be sigma's state with the least margin recorded.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "certify/certify_common.hpp"
#include "certify/kr_certifier.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::certify_detail {

namespace {

using bounds::Accumulator;
using bounds::Interval;

constexpr std::size_t kMostSummaries = 1 << 18;

}  // namespace

// The dimensions the MLPs and the unembedding read, or the MLPs write, hold at every t >= 1
// what they hold at t = 1 (the same for BOS at t = 0): else sigma would not determine them.
void KrCertifier::check_points_support() const {
  std::vector<char> used(d_, 0);
  for (const Layer& layer : net_.layers) {
    if (!layer.mlp) continue;
    for (int u = 0; u < layer.mlp->in_weight.outerSize(); ++u)
      for (SparseMatrix::InnerIterator it(layer.mlp->in_weight, u); it; ++it) used[it.col()] = 1;
    for (int r : reads(layer.mlp->out_weight)) used[r] = 1;
  }
  for (int r : reads(net_.unembedding)) used[r] = 1;
  for (const Count& c : counts_) used[c.dim] = 0;  // the heads' obligations cover them
  for (int a = 1; a < static_cast<int>(net_.vocabulary.size()); ++a) {
    const std::vector<double> first = residual(a, std::min(1, t_max_));
    for (int t = 2; t <= t_max_; ++t) {
      const std::vector<double> x = residual(a, t);
      for (int r = 0; r < d_; ++r)
        if (used[r] && x[r] != first[r])
          refuse(-1, "embedding",
                 "an MLP or the unembedding reads " + dimension_text(r) +
                     ", which changes with the position (t = 1 and t = " + std::to_string(t) +
                     "): the prefix summaries do not determine it (not built)",
                 true);
    }
  }
}

// The summaries of every prefix of length <= T: a breadth-first search from (q0, 0, BOS), one
// letter a step; a count past (its largest increment) T needs more than T letters (increments
// are not negative: checked), so the search stops there.
std::vector<KrCertifier::Summary> KrCertifier::summaries() const {
  const int tokens = static_cast<int>(net_.vocabulary.size());
  std::vector<long> bound(counts_.size());
  for (std::size_t c = 0; c < counts_.size(); ++c) {
    const auto& inc = counts_[c].increment;
    if (*std::min_element(inc.begin(), inc.end()) < 0)
      refuse(counts_[c].layer, "counts", "a negative increment (not built)", true);
    bound[c] = *std::max_element(inc.begin(), inc.end()) * static_cast<long>(t_max_);
  }
  std::vector<long> letter(tokens, -1);
  for (int a = 1; a < tokens; ++a) letter[a] = a_.find_letter(net_.vocabulary[a]);
  std::vector<Summary> out{{static_cast<int>(a_.initial()), 0, std::vector<long>(counts_.size())}};
  std::set<std::tuple<int, int, std::vector<long>>> seen{{out[0].state, 0, out[0].z}};
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (int a = 1; a < tokens; ++a) {
      if (letter[a] < 0)
        throw std::invalid_argument("the network's letter '" + net_.vocabulary[a] +
                                    "' is not the automaton's");
      Summary next{static_cast<int>(a_.step(out[i].state, static_cast<LetterId>(letter[a]))), a,
                   out[i].z};
      bool within = true;
      for (std::size_t c = 0; c < counts_.size(); ++c)
        within = within && (next.z[c] += counts_[c].increment[a]) <= bound[c];
      if (!within || !seen.emplace(next.state, a, next.z).second) continue;
      out.push_back(std::move(next));
      if (out.size() > kMostSummaries)
        refuse(0, "counts",
               "more than " + std::to_string(kMostSummaries) +
                   " prefix summaries (state, counts, letter): past the enumeration's limit",
               true);
    }
  }
  return out;
}

// Layer `layer`'s counts: a float32 within eps of the integer (the dimension held 0 before).
void KrCertifier::set_counts(const Summary& s, int layer, std::vector<Interval>& x) const {
  for (std::size_t c = 0; c < counts_.size(); ++c)
    if (counts_[c].layer == layer) {
      const double z = static_cast<double>(s.z[c]);
      x[counts_[c].dim] = bounds::float32_inside(z - counts_[c].eps, z + counts_[c].eps);
    }
}

std::string KrCertifier::block_of(int l, int dim) const {
  const Mlp& mlp = *net_.layers[l].mlp;
  for (SparseMatrix::InnerIterator it(mlp.out_weight, dim); it; ++it)
    for (const MlpBlock& b : mlp.blocks)
      if (it.value() != 0.0f && it.col() >= b.first && it.col() < b.first + b.count) return b.name;
  return "mlp";
}

// What the pass covers: whole-sum heads only (a select head's copy is a leaked value of
// another position, not followed), and MLP blocks that comb a count (a residue, an increment,
// a coordinate); anything else is undecided at its first part.
void KrCertifier::check_points_parts() const {
  for (int l = 0; l < static_cast<int>(net_.layers.size()); ++l) {
    for (const AttentionHead& h : net_.layers[l].heads)
      if (h.kind == HeadKind::Select)
        refuse(l, h.name,
               "every head's obligation held, but a select head's copy (a memory unit, a "
               "fetch) is not followed into the MLPs and the unembedding (not built): the "
               "network is not certified",
               true);
    if (!net_.layers[l].mlp) continue;
    for (const MlpBlock& b : net_.layers[l].mlp->blocks)
      if (b.role.kind != RoleKind::CounterResidue && b.role.kind != RoleKind::CounterIncrement &&
          b.role.kind != RoleKind::Coordinate)
        refuse(l, b.name,
               "every head's obligation held, but this MLP block (role '" + describe(b.role) +
                   "') is not a counter's comb, and only combs are built: the network is not "
                   "certified",
               true);
  }
}

void KrCertifier::check_points(nlohmann::json& c) {
  check_points_parts();
  check_points_support();
  const std::vector<Summary> all = summaries();
  const int layers = static_cast<int>(net_.layers.size());
  std::vector<long long> cases(layers, 0);
  double margin = std::numeric_limits<double>::infinity();
  nlohmann::json at;
  for (const Summary& s : all) {
    interruption_point();  // one pass of the network since the last
    std::string text = "for the prefixes in state '" + a_.state_name(s.state) + "'";
    for (std::size_t k = 0; k < s.z.size(); ++k)
      text += (k ? ", " : " with count ") + std::to_string(s.z[k]);
    text += ", last token '" + net_.vocabulary[s.token] + "'";
    const std::vector<double> e = residual(s.token, s.token == 0 ? 0 : 1);
    std::vector<Interval> x(d_);
    for (int r = 0; r < d_; ++r) x[r] = Interval::point(e[r]);
    for (int l = 0; l < layers; ++l) {
      set_counts(s, l, x);
      if (!net_.layers[l].mlp) continue;
      for (const auto& [r, v] : mlp_written(l, x, text, cases[l]))
        x[r] = add_rounded(x[r], Interval::point(v), bounds::Format::Float32);
    }
    std::vector<Accumulator> logit(net_.states.size());
    for (int r = 0; r < net_.unembedding.outerSize(); ++r)
      for (SparseMatrix::InnerIterator it(net_.unembedding, r); it; ++it)
        logit[it.col()].add(it.value(), x[r]);
    const Interval right = logit[s.state].result();
    for (int q = 0; q < static_cast<int>(logit.size()); ++q) {
      const Interval other = logit[q].result();
      if (q == s.state) continue;
      if (right.lo - other.hi < margin) margin = right.lo - other.hi, at = text;
      if (!(right.lo > other.hi))
        refuse(layers, "unembedding",
               text + ": the state's logit " + interval_text(right) + " is not above '" +
                   a_.state_name(q) + "''s " + interval_text(other));
    }
  }
  nlohmann::json& o = c["obligations"];
  nlohmann::json counts = nlohmann::json::array();
  for (const Count& k : counts_)
    counts.push_back({{"layer", k.layer}, {"dim", k.dim}, {"increments", k.increment}});
  o.push_back({{"kind", "summaries"}, {"reachable", all.size()}, {"counts", counts}});
  for (int l = 0; l < layers; ++l)
    if (net_.layers[l].mlp)
      o.push_back({{"kind", "mlp"},
                   {"layer", l},
                   {"summaries", all.size()},
                   {"roundings", cases[l]},
                   {"encoding", "exact integers"}});
  o.push_back({{"kind", "unembedding"}, {"prefixes", all.size()}, {"margin", margin}, {"at", at}});
  c["claim"]["margin"] = margin;
  c["claim"]["summation"] = "products in any order, each MLP unit's bias added last";
}

}  // namespace krc::certify_detail
