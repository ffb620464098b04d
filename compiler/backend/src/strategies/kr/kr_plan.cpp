// The kr plan (krc/plan.hpp): each level's mode from its action tables, and where the
// scheduler will put each level's operations. The placement follows the scheduler's rule
// (ir/schedule.hpp: an operation runs in the earliest sublayer of its kind after everything it
// reads was written) applied to the operations the builders in this folder add; the tests
// check it against the built networks.
#include <algorithm>

#include "strategies/kr/cascade_context.hpp"
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

// Per-level placement. Returns the sublayer after which the level's coordinate is readable.
int place_level(const KrLevelPlan& plan, int transitions, Span& span) {
  switch (plan.mode) {
    case LevelMode::Constant:
      return -1;
    case LevelMode::Scan: {
      int ready = transitions;
      for (int s = 0; s < plan.scan.steps; ++s) {
        ready = span.add(next_attention(ready));  // fetch the prefix 2^s back
        ready = span.add(ready + 1);              // compose
      }
      return ready;
    }
    case LevelMode::Memory:
    case LevelMode::Counters:
      break;
  }
  int counters_ready = -1;
  for (const auto& component : plan.components) {
    int residue = -1;
    for (std::size_t i = 0; i < component.counters.size(); ++i) {
      // The top counter's increment is linear in the element; the others are a lookup of the
      // element and the counters above at t-1.
      const int increment = i == 0 ? transitions : span.add(next_mlp(std::max(transitions, residue)));
      const int head = span.add(next_attention(increment));
      residue = span.add(head + 1);
    }
    counters_ready = std::max(counters_ready, residue);
  }
  const bool counters = counters_ready >= 0;
  if (plan.resets) {
    const int memory = span.add(next_attention(std::max(transitions, counters_ready)));
    return counters ? span.add(memory + 1) : memory;  // combine with the counters now
  }
  // Without resets one component has counters: one counter reads out linearly.
  for (const auto& component : plan.components)
    if (component.counters.size() > 1) return span.add(next_mlp(counters_ready));
  return counters_ready;
}

void place_per_level(KrPlan& plan) {
  const int levels = static_cast<int>(plan.levels.size());
  std::vector<int> coordinate(levels, -1), previous(levels, -1);
  int last = -1;
  for (int d = 0; d < levels; ++d) {
    KrLevelPlan& level = plan.levels[d];
    Span span;
    int transitions = -1;
    if (d > 0 && level.mode != LevelMode::Constant)
      transitions = span.add(
          next_mlp(*std::max_element(previous.begin(), previous.begin() + d)));
    coordinate[d] = place_level(level, transitions, span);
    if (d + 1 < levels) previous[d] = span.add(next_attention(coordinate[d]));
    level.first_sublayer = span.first;
    level.last_sublayer = span.last;
    last = std::max(last, span.last);
  }
  if (levels >= 2) last = next_mlp(*std::max_element(coordinate.begin(), coordinate.end()));
  plan.layers = last < 0 ? 0 : last / 2 + 1;
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

const char* to_string(ScanForm form) {
  switch (form) {
    case ScanForm::ElementOneHot:
      return "element one-hot";
    case ScanForm::StateMapOneHot:
      return "state-map one-hot";
    case ScanForm::IntegerCoordinates:
      return "integer coordinates";
  }
  return "?";
}

const char* to_string(LevelMode mode) {
  switch (mode) {
    case LevelMode::Constant:
      return "constant";
    case LevelMode::Memory:
      return "memory";
    case LevelMode::Counters:
      return "counters";
    case LevelMode::Scan:
      return "scan";
  }
  return "?";
}

const char* to_string(CascadeForm form) {
  switch (form) {
    case CascadeForm::PerLevel:
      return "per level";
    case CascadeForm::TimeShiftedMemory:
      return "time-shifted memory";
  }
  return "?";
}

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
  if (plan.form == CascadeForm::TimeShiftedMemory)
    place_time_shifted(plan);
  else
    place_per_level(plan);
  return plan;
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
