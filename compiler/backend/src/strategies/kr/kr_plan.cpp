// The kr plan (krc/plan.hpp): each level's mode from its action tables, and where the
// scheduler will put each level's operations. The placement follows the scheduler's rule
// (ir/schedule.hpp: an operation runs in the earliest sublayer of its kind after everything it
// reads was written) applied to the operations the builders in this folder add; the tests
// check it against the built networks.
#include <algorithm>

#include "strategies/kr/cascade_context.hpp"
#include "strategies/kr/clamped_walk.hpp"
#include "strategies/kr/level_analysis.hpp"

namespace krc {

namespace {

// Sublayer 2L is layer L's attention, 2L + 1 its MLP; -1 means "written by the embedding".
int next_attention(int ready) { return ready < 0 ? 0 : ready + (ready % 2 == 0 ? 2 : 1); }
int next_mlp(int ready) { return ready < 0 ? 1 : ready + (ready % 2 == 1 ? 2 : 1); }

struct Span {
  int first = -1, last = -1;
  int add(int sublayer) {
    first = first < 0 ? sublayer : std::min(first, sublayer);
    last = std::max(last, sublayer);
    return sublayer;
  }
};

// When a level's values become readable (sublayers; -1: from the embedding).
struct Ready {
  int coordinate = -1;  // x(t): one-hot or linear
  int parts = -1;       // x(t) and x(t-1) as lookups over their parts (fused levels)
  int previous = -1;    // x(t-1) as a one-hot or linear categorical
};

// The counters of every component: counter i's head sums increments that counter i-1's MLP
// wrote (the top counter's are linear in the element): one layer per counter, or two when
// counters sum in blocks (the block sums and the residues at block starts, then the sum of
// residues and the comb).
int place_counters(const KrLevelPlan& plan, bool blocks, int transitions, Span& span) {
  int ready = -1;
  for (const auto& component : plan.components) {
    int at = transitions;
    for (std::size_t i = 0; i < component.counters.size(); ++i) {
      if (blocks) at = span.add(span.add(next_attention(at)) + 1);
      const int head = span.add(next_attention(at));
      at = span.add(head + 1);
    }
    if (!component.counters.empty()) ready = std::max(ready, at);
  }
  return ready;
}

Ready place_level(const KrLevelPlan& plan, bool blocks, int transitions, bool below, Span& span) {
  Ready r;
  switch (plan.mode) {
    case LevelMode::Constant:
      return r;
    case LevelMode::Scan: {
      int ready = transitions;
      for (int s = 0; s < plan.scan.steps; ++s) {
        ready = span.add(next_attention(ready));  // fetch the prefix 2^s back
        ready = span.add(ready + 1);              // compose
      }
      r.coordinate = ready;
      break;
    }
    case LevelMode::Memory:
    case LevelMode::Counters: {
      const int counters = place_counters(plan, blocks, transitions, span);
      if (!plan.resets) {  // the last comb writes the coordinate
        r.coordinate = counters;
        break;
      }
      const int fetch = plan.previous_in_place ? span.add(next_attention(transitions)) : -1;
      const int memory = span.add(next_attention(std::max({transitions, counters, fetch})));
      const bool combines = counters >= 0;  // components with counters need a lookup
      r.parts = memory;
      r.coordinate = plan.coordinate_fused ? memory : combines ? span.add(memory + 1) : memory;
      if (plan.previous_in_place)
        r.previous = plan.previous_explicit && combines ? span.add(memory + 1) : memory;
      break;
    }
  }
  // Levels below read x(t-1): from the parts in place, or by a fetch head.
  if (below && !plan.previous_in_place) r.previous = span.add(next_attention(r.coordinate));
  return r;
}

void place_per_level(KrPlan& plan) {
  const int levels = static_cast<int>(plan.levels.size());
  std::vector<Ready> ready(levels);
  int last = -1;
  for (int d = 0; d < levels; ++d) {
    KrLevelPlan& level = plan.levels[d];
    Span span;
    int transitions = -1;
    if (d > 0 && level.mode != LevelMode::Constant) {
      int inputs =
          plan.levels[d - 1].previous_in_place ? ready[d - 1].parts : ready[d - 1].previous;
      for (int j = 0; j + 1 < d; ++j) inputs = std::max(inputs, ready[j].previous);
      transitions = span.add(next_mlp(inputs));
    }
    ready[d] = place_level(level, plan.counter_block > 0, transitions, d + 1 < levels, span);
    level.first_sublayer = span.first;
    level.last_sublayer = span.last;
    last = std::max(last, span.last);
  }
  if (levels >= 2) {
    int coordinates = -1;
    for (const auto& r : ready) coordinates = std::max(coordinates, r.coordinate);
    last = next_mlp(coordinates);
  }
  plan.layers = last < 0 ? 0 : last / 2 + 1;
}

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

// Level d at shift sh is a memory head after (d > 0) a lookup of the letter at t-sh (fetched in
// sublayer 0) and the upper levels at shift sh + 1.
void place_time_shifted(KrPlan& plan) {
  const int levels = static_cast<int>(plan.levels.size());
  std::vector<std::vector<int>> ready(levels);
  int last = levels >= 3 ? 0 : -1;  // the letter fetches
  for (int d = 0; d < levels; ++d) {
    KrLevelPlan& level = plan.levels[d];
    Span span;
    for (int sh = 0; sh < levels - d; ++sh) {
      if (!level.resets) {
        ready[d].push_back(-1);
        continue;
      }
      int flag = sh == 0 ? -1 : 0;
      if (d > 0) {
        for (int j = 0; j < d; ++j) flag = std::max(flag, ready[j][sh + 1]);
        flag = span.add(next_mlp(flag));
      }
      ready[d].push_back(span.add(next_attention(flag)));
    }
    level.first_sublayer = span.first;
    level.last_sublayer = span.last;
    last = std::max(last, span.last);
  }
  if (levels >= 2) {
    int coordinates = -1;
    for (int d = 0; d < levels; ++d) coordinates = std::max(coordinates, ready[d][0]);
    last = next_mlp(coordinates);
  }
  plan.layers = last < 0 ? 0 : last / 2 + 1;
}

// Counters sum over all positions where plain float32 keeps the count within 1/8 of an
// integer: measured with sequential float32 sums (softmax normaliser and weighted values),
// the worst count error is 0.04 at T = 1024 (p <= 7), 0.064 at 2048 (p = 5), 0.15 at 2048
// (p = 7) and 0.125 at 4096 (p = 3). Elsewhere they sum in blocks of B >= sqrt(T), a power of
// two, so that both the block sums and the sums of residues stay within 1024 terms.
int counter_block(const KrPlan& plan, int max_len) {
  int largest = 0;
  for (const auto& level : plan.levels)
    for (const auto& component : level.components)
      for (int p : component.counters) largest = std::max(largest, p);
  if (largest == 0) return 0;
  if (max_len <= 2048 && static_cast<long>(largest - 1) * max_len <= 6144) return 0;
  int block = 2;
  while (static_cast<long>(block) * block < max_len) block *= 2;
  return block;
}

KrLevelPlan plan_level(const HolonomyDecomposition& dec, int d, int max_len,
                       const KrOptions& options) {
  const Level& level = dec.level(d);
  const LevelAnalysis analysis = analyze_level(dec, d, options);
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
  if (plan.mode == LevelMode::Scan)
    plan.scan = plan_prefix_scan(level_scan_spec(dec, d), max_len).plan;
  return plan;
}

}  // namespace

KrPlan plan_kr(const HolonomyDecomposition& decomposition, int max_len, const KrOptions& options) {
  KrPlan plan;
  plan.max_len = max_len;
  bool memory_only = true;
  for (int d = 0; d < decomposition.level_count(); ++d) {
    plan.levels.push_back(plan_level(decomposition, d, max_len, options));
    const LevelMode mode = plan.levels.back().mode;
    memory_only = memory_only && (mode == LevelMode::Memory || mode == LevelMode::Constant);
  }
  plan.form = options.time_shifted_memory && memory_only ? CascadeForm::TimeShiftedMemory
                                                         : CascadeForm::PerLevel;
  plan.counter_block = counter_block(plan, max_len);
  if (plan.form == CascadeForm::TimeShiftedMemory) {
    place_time_shifted(plan);
  } else {
    choose_fusions(decomposition, plan);
    place_per_level(plan);
  }
  return plan;
}

std::string plan_text(const KrPlan& plan) {
  if (plan.form == CascadeForm::ClampedWalk) return walk_text(plan.walk);
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
