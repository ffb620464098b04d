// The kr plan's decisions (krc/backend/plan.hpp, kr_strategy.hpp): each level's mode from its
// analysis of the action tables, the fusions and the counter block. Where each level's
// operations land is the scheduler's placement of the operations built from these decisions
// (build_and_place), not a prediction made here.
#include <algorithm>
#include <optional>

#include "krc/automata/input_error.hpp"
#include "primitives/residue.hpp"
#include "strategies/kr/cascade_context.hpp"
#include "strategies/kr/kr_strategy.hpp"
#include "strategies/kr/level_analysis.hpp"

namespace krc {

namespace {

// Fusing a level's parts into the lookups below takes |G|^2 units per value where an explicit
// coordinate takes one: fuse unless that is beyond this many units.
constexpr long long kMaxFusedUnits = 4'000'000;

void choose_fusions(const HolonomyDecomposition& dec, KrPlan& plan) {
  const int levels = static_cast<int>(plan.levels.size());
  for (int d = 0; d < levels; ++d) {
    KrLevelPlan& level = plan.levels[d];
    if (level.mode != LevelMode::Counters || !level.resets) continue;
    long long order = 1;
    for (std::size_t s = 0; s < level.components.size(); ++s)
      if (!level.components[s].counters.empty())
        order =
            std::max<long long>(order, static_cast<long long>(dec.level(d).slots[s].group.order));
    const long long letters = dec.automaton().letter_count();
    if (d + 1 < levels) {
      const long long units =
          static_cast<long long>(dec.table(d + 1).upper.size()) * letters * order * order;
      level.previous_in_place = units <= kMaxFusedUnits;
      level.previous_explicit = level.previous_in_place && d + 2 < levels;
    } else if (levels >= 2) {
      const long long units = static_cast<long long>(dec.reachable().size()) * order * order;
      level.coordinate_fused = units <= kMaxFusedUnits;
    }
  }
}

// Counters sum over all positions where plain float32 keeps the count within 1/8 of an
// integer: measured with sequential float32 sums (softmax normaliser and weighted values),
// the worst count error is 0.04 at T = 1024 (p <= 7), 0.064 at 2048 (p = 5), 0.15 at 2048
// (p = 7) and 0.125 at 4096 (p = 3). (Those networks stay as they were.) Beyond, counters sum
// in blocks of B >= sqrt(T), a power of two, so that both the block sums and the sums of
// residues stay within 1024 terms, and every comb reads a count below 2 (p - 1) B: its output
// sums are exact in any summation order (primitives/residue.hpp, comb_output_magnitude).
// The dyadic heads count exactly in one layer, but the comb that reads a count of (p - 1) T
// has output sums of about 4 z^2 / p, past the 2^23 where a float32 sum of halves is exact in
// every order, for every T past 2048: a BLAS that does not sum the hidden units in order
// (MKL's sgemm for fewer than 16 rows) gets it wrong (issue 36). So auto takes them only where
// that comb is exact in any order (comb_output_magnitude_bound, which no T past 2048 meets);
// forced (--counting dyadic) they are exact in unit order while (p - 1) T < 2^19.
void choose_counter_sum(KrPlan& plan, int max_len, const std::optional<CounterSum>& forced) {
  int largest = 0;
  for (const auto& level : plan.levels)
    for (const auto& component : level.components)
      for (int p : component.counters) largest = std::max(largest, p);
  const long most = static_cast<long>(std::max(largest, 1) - 1) * max_len;
  const bool whole = largest == 0 || (max_len <= 2048 && most <= 6144), dyadic = most < (1L << 19);
  const bool any_order =
      dyadic && comb_output_magnitude_bound(most, std::max(largest, 2)) <= kAnyOrderExactSum;
  plan.counter_sum = forced      ? *forced
                     : whole     ? CounterSum::Whole
                     : any_order ? CounterSum::Dyadic
                                 : CounterSum::Blocks;
  // A forced method must still be exact (in unit order, for dyadic): a whole sum drifts, a
  // dyadic count's comb rounds.
  if ((plan.counter_sum == CounterSum::Whole && !whole) ||
      (plan.counter_sum == CounterSum::Dyadic && !dyadic))
    throw LimitError(std::string("--counting ") + to_string(plan.counter_sum) + ": not exact in " +
                     "float32 at max-len " + std::to_string(max_len) + " with a Z" +
                     std::to_string(largest) + " counter (whole: max-len <= 2048 and (p - 1) " +
                     "max-len <= 6144; dyadic: (p - 1) max-len < 2^19); blocks or auto is");
  plan.counter_block = 0;
  if (plan.counter_sum != CounterSum::Blocks) return;
  plan.counter_block = 2;
  while (static_cast<long>(plan.counter_block) * plan.counter_block < max_len)
    plan.counter_block *= 2;
}

// A scan level's parallel prefix goes to `scan`, which the builder builds from.
KrLevelPlan plan_level(const HolonomyDecomposition& dec, int d, int max_len,
                       const LevelAnalysis& analysis, std::optional<ScanLevel>& scan) {
  const Level& level = dec.level(d);
  KrLevelPlan plan;
  plan.level = d + 1;
  plan.mode = mode_of(analysis);
  plan.resets = analysis.resets;
  plan.values = level.width;
  for (std::size_t s = 0; s < level.slots.size(); ++s) {
    KrComponentPlan component;
    component.tiles = static_cast<int>(level.slots[s].tiles.size());
    component.group = level.slots[s].group.name;
    if (plan.mode != LevelMode::Scan && analysis.groups[s])
      component.counters = analysis.groups[s]->primes();
    plan.components.push_back(std::move(component));
  }
  if (plan.mode == LevelMode::Scan) {
    scan = plan_scan_level(dec, d, max_len);
    plan.scan = scan->choice.plan;
  }
  return plan;
}

}  // namespace

KrCascade decide_cascade(const HolonomyDecomposition& decomposition, int max_len,
                         const KrOptions& options) {
  KrCascade cascade;
  cascade.decomposition = &decomposition;
  cascade.select_sharpness = options.select_sharpness;
  KrPlan& plan = cascade.plan;
  plan.max_len = max_len;
  bool memory_only = true;
  for (int d = 0; d < decomposition.level_count(); ++d) {
    cascade.analyses.push_back(analyze_level(decomposition, d, options));
    cascade.scans.emplace_back();
    plan.levels.push_back(
        plan_level(decomposition, d, max_len, cascade.analyses.back(), cascade.scans.back()));
    const LevelMode mode = plan.levels.back().mode;
    memory_only = memory_only && (mode == LevelMode::Memory || mode == LevelMode::Constant);
  }
  plan.form = options.time_shifted_memory && memory_only ? CascadeForm::TimeShiftedMemory
                                                         : CascadeForm::PerLevel;
  choose_counter_sum(plan, max_len, options.counter_sum);
  if (plan.form == CascadeForm::PerLevel) choose_fusions(decomposition, plan);
  return cascade;
}

KrPlan plan_kr(const HolonomyDecomposition& decomposition, int max_len, const KrOptions& options) {
  KrCascade cascade = decide_cascade(decomposition, max_len, options);
  build_and_place(cascade);
  return std::move(cascade.plan);
}

std::string plan_text(const KrPlan& plan) {
  std::string out;
  for (const auto& level : plan.levels) {
    out += "level " + std::to_string(level.level) + ":";
    // As krc decompose prints them: (tiles,group), or the tile count alone for a trivial group.
    for (const auto& c : level.components)
      out += c.group == "1" ? " " + std::to_string(c.tiles)
                            : " (" + std::to_string(c.tiles) + "," + c.group + ")";
    std::string units;
    switch (level.mode) {
      case LevelMode::Constant:
        units = "constant";
        break;
      case LevelMode::Memory:
        units = "memory unit";
        break;
      case LevelMode::Counters:
        units = "counters";
        for (const auto& c : level.components)
          for (int p : c.counters) units += " Z" + std::to_string(p);
        break;
      case LevelMode::Scan:
        units = std::string("scan (") + to_string(level.scan.form) + ")";
        break;
    }
    if (level.resets && level.mode != LevelMode::Memory) units += " + memory unit";
    out += "  " + units + "\n";
  }
  return out;
}

}  // namespace krc
