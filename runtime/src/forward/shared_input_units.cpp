#include "forward/shared_input_units.hpp"

#include <algorithm>
#include <map>

#include "forward/prepared_network.hpp"

namespace krc {

SharedInputUnits::Ramp SharedInputUnits::ramp(
    std::vector<std::pair<double, std::pair<double, double>>> units, bool rising) {
  std::sort(units.begin(), units.end());
  const std::size_t n = units.size();
  Ramp r;
  r.threshold.reserve(n);
  for (const auto& u : units) r.threshold.push_back(u.first);
  r.slope.assign(n + 1, 0.0);
  r.offset.assign(n + 1, 0.0);
  if (rising) {
    for (std::size_t k = 0; k < n; ++k) {
      r.slope[k + 1] = r.slope[k] + units[k].second.first;
      r.offset[k + 1] = r.offset[k] + units[k].second.second;
    }
  } else {
    for (std::size_t k = n; k-- > 0;) {
      r.slope[k] = r.slope[k + 1] + units[k].second.first;
      r.offset[k] = r.offset[k + 1] + units[k].second.second;
    }
  }
  return r;
}

SharedInputUnits::SharedInputUnits(std::vector<std::pair<int, double>> direction,
                                   const std::vector<Unit>& units, const ScatterRows& out_by_unit)
    : direction_(std::move(direction)) {
  // Per output dim and side: (threshold, (w a, w b)).
  using Entries = std::vector<std::pair<double, std::pair<double, double>>>;
  std::map<int, std::pair<Entries, Entries>> by_output;
  for (const Unit& u : units) {
    units_.push_back(u.unit);
    active_at_zero_ = active_at_zero_ || u.bias > 0.0;
    const double threshold = -u.bias / u.factor;
    (u.factor > 0.0 ? rising_ : falling_).emplace_back(threshold, u.unit);
    for (int e = out_by_unit.begin(u.unit); e < out_by_unit.end(u.unit); ++e) {
      const double w = out_by_unit.value[e];
      auto& sides = by_output[out_by_unit.column[e]];
      (u.factor > 0.0 ? sides.first : sides.second)
          .push_back({threshold, {w * u.factor, w * u.bias}});
    }
  }
  std::sort(rising_.begin(), rising_.end());
  std::sort(falling_.begin(), falling_.end());
  for (auto& [dim, sides] : by_output)
    outputs_.push_back(
        {dim, ramp(std::move(sides.first), true), ramp(std::move(sides.second), false)});
}

void SharedInputUnits::add_contribution(double z, double* out) const {
  if (z == 0.0 && !active_at_zero_) return;  // every a_u z + b_u = b_u <= 0
  for (const Output& o : outputs_) {
    double sum = 0.0;
    if (!o.rising.threshold.empty()) {
      // Active: t_u < z, a prefix.
      const auto& t = o.rising.threshold;
      const auto k =
          std::partition_point(t.begin(), t.end(), [z](double x) { return x < z; }) - t.begin();
      sum += z * o.rising.slope[k] + o.rising.offset[k];
    }
    if (!o.falling.threshold.empty()) {
      // Active: t_u > z, a suffix.
      const auto& t = o.falling.threshold;
      const auto k =
          std::partition_point(t.begin(), t.end(), [z](double x) { return x <= z; }) - t.begin();
      sum += z * o.falling.slope[k] + o.falling.offset[k];
    }
    out[o.dim] += sum;
  }
}

}  // namespace krc

namespace krc {

std::uint64_t SharedInputUnits::bytes() const {
  std::uint64_t total = held_bytes(direction_) + held_bytes(units_) + held_bytes(outputs_) +
                        held_bytes(rising_) + held_bytes(falling_);
  for (const Output& o : outputs_)
    for (const Ramp* r : {&o.rising, &o.falling})
      total += held_bytes(r->threshold) + held_bytes(r->slope) + held_bytes(r->offset);
  return total;
}

}  // namespace krc
