// A level whose group is not solvable, or too large for counters (LevelMode::Scan): a parallel
// prefix over the level's own transformations of its values (primitives/prefix_scan.hpp).
// Its depth grows like log2 T, as Theorem 4 of Liu et al. says it must unless TC0 = NC1. The
// transitions lookup writes each position's transformation as the scan's initial element.
#include <map>

#include "primitives/prefix_scan.hpp"
#include "strategies/kr/cascade_context.hpp"

namespace krc {

namespace {

// What an action does to every value of the level: a reset sends all of them to one value; a
// permutation moves the tiles of its component and fixes everything else.
Transformation transformation_of(const Level& level, const LevelAction& act) {
  Transformation f(level.width);
  for (int v = 0; v < level.width; ++v) {
    if (act.reset)
      f[v] = static_cast<StateId>(act.reset_to);
    else if (v != level.dummy && level.slot_of[v] == act.slot)
      f[v] = static_cast<StateId>(level.first_value[act.slot] + act.permutation[level.tile_of[v]]);
    else
      f[v] = static_cast<StateId>(v);
  }
  return f;
}

}  // namespace

ScanLevel plan_scan_level(const HolonomyDecomposition& dec, int d, int max_len) {
  const Level& level = dec.level(d);
  ScanLevel scan;
  PrefixScanSpec& spec = scan.spec;
  spec.name = "level " + std::to_string(d + 1) + " scan";
  spec.set_labels = level_value_labels(dec, d);
  spec.initial = static_cast<StateId>(dec.encode(dec.automaton().initial())[d]);
  spec.level = d + 1;
  spec.one_hot_result = true;  // the lookups of the levels below and the decoding read it
  for (const auto& row : dec.table(d).action)
    for (const auto& act : row) {
      auto f = transformation_of(level, act);
      if (scan.symbol_of.emplace(f, static_cast<int>(spec.symbols.size())).second) {
        spec.symbols.push_back(f);
        spec.symbol_labels.push_back("f" + std::to_string(spec.symbols.size()));
      }
    }
  scan.choice = plan_prefix_scan(spec, max_len);
  return scan;
}

void build_scan_level(CascadeContext& ctx, int d, const ScanLevel& planned) {
  const Level& level = ctx.dec.level(d);
  PrefixScan scan(ctx.features, planned.spec, planned.choice);
  ctx.add_transitions(
      d,
      [&](const LevelAction& act) {
        return scan.symbol_terms(planned.symbol_of.at(transformation_of(level, act)));
      },
      scan.identity_terms());
  scan.build(ctx.tag(d) + " scan step");
  ctx.coordinate[d] = scan.result();
}

}  // namespace krc
