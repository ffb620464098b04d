// One kr MLP on one prefix summary's residual (kr_certifier.hpp, kr_points.cpp). The residual
// is points except the counts, float32 numbers within eps of an integer. A unit computes
// ReLU(fl(S + b)): S its products summed in any order, the bias b added last (the combs'
// exactness needs that order: compiler/certify.md, network obligation 5). So:
//  - S is bounded by the interval sum; a unit whose S + b cannot pass 0 is off (exactly 0);
//  - S a point: the unit's value is one float32 addition;
//  - else S is one of the few float32 numbers in its interval (a comb's M = 1.5 2^21 puts
//    them on the quarter grid: at most 3 for eps < 3/8), and every one is tried. Units whose
//    inputs are the same terms, at most two of them and each product exact, compute the same
//    S (one rounding of the same real, in any order, fused or not): they are tried together.
//    Other units are tried independently (a superset).
// Every written dimension must then be an exact integer (the combs' one-hots and increments),
// whatever the roundings: the sum of the units' outputs exact in any order (the interval
// criterion of interval.hpp), the same for every rounding. A one-ulp fault in a comb's weight
// or bias leaves the integers, and is refused here, naming the block.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "certify/certify_common.hpp"
#include "certify/kr_certifier.hpp"

namespace krc::certify_detail {

namespace {

using bounds::Accumulator;
using bounds::Interval;

constexpr int kMostRoundings = 16;             // float32 values one unit's sum may take
constexpr long long kMostCombinations = 4096;  // joint roundings per summary and MLP

bool power_of_two(float w) {
  int e = 0;
  return w != 0.0f && std::fabs(std::frexp(w, &e)) == 0.5f;
}

Interval rounded_between(double lo, double hi) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return {static_cast<double>(static_cast<float>(std::nextafter(lo, -kInf))),
          static_cast<double>(static_cast<float>(std::nextafter(hi, kInf)))};
}

// The units whose S is not one float32, grouped as the header says: per group, its units and
// the float32 numbers its S may take.
struct Open {
  std::vector<std::vector<int>> units;
  std::vector<std::vector<float>> values;
};

}  // namespace

std::vector<std::pair<int, double>> KrCertifier::mlp_written(int l, const std::vector<Interval>& x,
                                                             const std::string& at,
                                                             long long& cases) const {
  const Mlp& mlp = *net_.layers[l].mlp;
  std::vector<float> h(mlp.hidden(), 0.0f);
  Open open;
  std::map<std::vector<std::pair<int, float>>, std::size_t> group_of;
  for (int u = 0; u < mlp.hidden(); ++u) {
    Accumulator acc;
    std::vector<std::pair<int, float>> row;
    bool shared = true;
    double lo = 0.0, hi = 0.0;  // the exact sum's range (the products are exact in double)
    for (SparseMatrix::InnerIterator it(mlp.in_weight, u); it; ++it) {
      const Interval v = x[it.col()];
      if (it.value() == 0.0f || (v.is_point() && v.lo == 0.0)) continue;
      acc.add(it.value(), v);
      row.emplace_back(it.col(), it.value());
      const double w = it.value(), p = w * v.lo;
      lo += std::min(p, w * v.hi), hi += std::max(p, w * v.hi);
      shared = shared && (v.is_point() ? static_cast<double>(static_cast<float>(p)) == p
                                       : power_of_two(it.value()));
    }
    // One or two exact products: the sum is one rounding of a real in [lo, hi], so (rounding
    // being monotone) between the roundings of its ends, tighter than the any-order bound.
    const Interval sum = shared && row.size() <= 2 ? rounded_between(lo, hi) : acc.result();
    const float b = mlp.in_bias[u];
    if (sum.hi + static_cast<double>(b) <= 0.0) continue;  // off: fl(S + b) <= 0, monotone
    if (sum.is_point()) {
      h[u] = std::max(0.0f, static_cast<float>(sum.lo) + b);
      continue;
    }
    std::vector<float> values;
    for (auto v = static_cast<float>(sum.lo); v <= static_cast<float>(sum.hi);
         v = std::nextafter(v, std::numeric_limits<float>::infinity()))
      if (values.push_back(v); values.size() > kMostRoundings)
        refuse(l, block_of_unit(l, u),
               at + ": a unit's sum may take more than " + std::to_string(kMostRoundings) +
                   " float32 values (" + interval_text(sum) + "): not enumerated",
               true);
    if (!shared || row.size() > 2) row = {{-1 - u, 0.0f}};  // a group of its own
    const auto [it, fresh] = group_of.emplace(row, open.units.size());
    if (fresh) open.units.emplace_back(), open.values.push_back(values);
    open.units[it->second].push_back(u);
  }
  return mlp_outputs(l, h, open.units, open.values, at, cases);
}

// Every joint rounding of the open groups; the written dimensions' sums for each.
std::vector<std::pair<int, double>> KrCertifier::mlp_outputs(
    int l, std::vector<float>& h, const std::vector<std::vector<int>>& units,
    const std::vector<std::vector<float>>& values, const std::string& at, long long& cases) const {
  const Mlp& mlp = *net_.layers[l].mlp;
  long long combinations = 1;
  for (const auto& v : values)
    if ((combinations *= static_cast<long long>(v.size())) > kMostCombinations)
      refuse(l, block_of_unit(l, units.front().front()),
             at + ": more than " + std::to_string(kMostCombinations) +
                 " joint roundings of the units' sums: not enumerated",
             true);
  std::vector<std::pair<int, double>> out;
  std::vector<std::size_t> pick(values.size(), 0);
  for (long long k = 0; k < combinations; ++k, ++cases) {
    for (std::size_t g = 0; g < values.size(); ++g)
      for (int u : units[g]) h[u] = std::max(0.0f, values[g][pick[g]] + mlp.in_bias[u]);
    std::size_t n = 0;
    for (int r = 0; r < d_; ++r) {
      if (mlp.out_weight.outerIndexPtr()[r] == mlp.out_weight.outerIndexPtr()[r + 1] &&
          mlp.out_bias[r] == 0.0f)
        continue;
      // In float32 the bias is one more term of the sum.
      Accumulator acc;
      for (SparseMatrix::InnerIterator it(mlp.out_weight, r); it; ++it)
        if (h[it.col()] != 0.0f) acc.add(it.value(), Interval::point(h[it.col()]));
      acc.add_constant(mlp.out_bias[r]);
      const Interval v = acc.result();
      if (!v.is_point() || v.lo != std::nearbyint(v.lo))
        refuse(l, block_of(l, r),
               at + ": it writes " + interval_text(v) + " to " + dimension_text(r) +
                   ", not an exact integer (a comb writes one-hots and integer increments, "
                   "exact in float32 in any order)");
      if (k == 0) out.emplace_back(r, v.lo);
      if (out[n++].second != v.lo)
        refuse(l, block_of(l, r),
               at + ": it writes " + number(v.lo) + " or " + number(out[n - 1].second) + " to " +
                   dimension_text(r) + ", as the count rounds: not a function of the count");
    }
    for (std::size_t g = 0; g < pick.size() && ++pick[g] == values[g].size(); ++g) pick[g] = 0;
  }
  return out;
}

std::string KrCertifier::block_of_unit(int l, int u) const {
  for (const MlpBlock& b : net_.layers[l].mlp->blocks)
    if (u >= b.first && u < b.first + b.count) return b.name;
  return "mlp";
}

}  // namespace krc::certify_detail
