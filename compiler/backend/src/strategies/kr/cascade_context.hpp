#pragma once
// What the builders of the kr strategy share while they write one program: the decomposition,
// the program and its input features, and each level's coordinate as it becomes available.
//
// Legend: d a level (0-based; printed as d + 1), x_d(t) level d's coordinate after t letters,
// "upper coordinates" the coordinates of levels 0..d-1, T = max_len.
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/program.hpp"
#include "krc/backend/plan.hpp"
#include "krc/decompose/holonomy.hpp"
#include "primitives/categorical.hpp"
#include "primitives/features.hpp"
#include "primitives/prefix_scan.hpp"
#include "strategies/kr/level_analysis.hpp"

namespace krc {

// The labels of level d's values: the tiles as state sets, "-" for the dummy.
std::vector<std::string> level_value_labels(const HolonomyDecomposition& dec, int d);

struct CascadeContext {
  CascadeContext(const HolonomyDecomposition& decomposition, int max_len);

  const HolonomyDecomposition& dec;
  const Automaton& automaton;
  Program program;
  Features features;
  Categorical tokens;   // the current letter
  Coordinates initial;  // x(0): the encoding of the initial state
  // Per level built so far: x_d(t) and x_d(t-1) as categoricals (one-hot or linear; empty
  // where no later operation needs them), and the same as lookups over the level's parts
  // (composites) where the level computes them without a combining MLP.
  std::vector<Categorical> coordinate, previous;
  std::vector<std::optional<Composite>> coordinate_parts, previous_parts;
  std::deque<Categorical> parts;  // what the composites refer to (stable addresses)

  // "level 3"
  std::string tag(int d) const { return "level " + std::to_string(d + 1); }
  // A role of level d (component, counter: 1-based, 0 for none).
  Role role(RoleKind kind, int d, int component = 0, int counter = 0, int step = 0) const {
    return Role{kind, d + 1, component, counter, step};
  }
  std::vector<std::string> value_labels(int d) const { return level_value_labels(dec, d); }
  // A coordinate that never changes: value x0 everywhere, read off the constant feature.
  Categorical constant_coordinate(int d);

  // The lookup from (letter, upper coordinates at t-1) to what level d needs to know about
  // its action: `outputs` maps each action to terms (none for actions that write nothing),
  // `at_bos` is what BOS holds. Level 1 depends on the letter alone: its lookup is the token
  // embedding. Level d-1's coordinate at t-1 is read as a composite when it has one (the
  // lookup then fuses with that level's combination of its parts).
  using ActionTerms = std::function<Terms(const LevelAction&)>;
  void add_transitions(int d, const ActionTerms& outputs, const Terms& at_bos);
  // The number of units add_transitions(d, ...) will add for actions that write something.
  long long transition_units(int d, const std::function<bool(const LevelAction&)>& writes);
  // A categorical stored with the context, for composites to refer to.
  const Categorical* keep(Categorical c) { return &parts.emplace_back(std::move(c)); }
};

// The level builders (one file each). Each appends level d's operations to the program and
// its coordinate to ctx.coordinate.
void build_counter_level(CascadeContext& ctx, int d, const KrPlan& plan, LevelAnalysis analysis);
// A scan level's parallel prefix as the plan chose it (kr_plan.cpp): the builder builds from
// this one, so the spec is read from the action table and the form chosen (the element form's
// monoid enumerated) once.
struct ScanLevel {
  PrefixScanSpec spec;
  std::map<Transformation, int> symbol_of;  // each transformation's symbol index in spec
  ScanChoice choice;
};
ScanLevel plan_scan_level(const HolonomyDecomposition& dec, int d, int max_len);
void build_scan_level(CascadeContext& ctx, int d, const ScanLevel& scan);

// The whole cascade when it is made of memory units only (CascadeForm::TimeShiftedMemory).
void build_memory_cascade(CascadeContext& ctx, const KrPlan& plan);

}  // namespace krc
