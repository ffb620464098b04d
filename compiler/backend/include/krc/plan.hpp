#pragma once
// What the backend decides before it writes a single weight: the typed plans of the two
// strategies. A plan is a pure function of the automaton (or its decomposition) and the
// options; the builders take it as their input, `krc compile` prints it, and tests check its
// predictions (layers, widths) against the networks built from it.
//
// Legend: Q states, T = max_len, K levels of the cascade, p a counter's prime modulus.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "krc/holonomy.hpp"

namespace krc {

// How a parallel prefix holds a transformation of its set X (|X| = n); primitives/prefix_scan.hpp
// gives each form's widths.
enum class ScanForm {
  ElementOneHot,       // one dimension per element of the generated monoid M; |M|^2 units a step
  StateMapOneHot,      // n one-hot blocks of width n (block q: the image of q); n^3 units a step
  IntegerCoordinates,  // n integers f(q) (Liu et al.'s Theorem 1 size); 2n^2 + 2n units a step
};
const char* to_string(ScanForm form);

// A parallel prefix over a set of transformations (the whole automaton for `scan`, a
// non-solvable level of the cascade for `kr`).
struct ScanPlan {
  ScanForm form = ScanForm::StateMapOneHot;
  int set_size = 0;             // |X|
  std::size_t monoid_size = 0;  // |M| when the element form was chosen, else 0
  int steps = 0;                // ceil(log2 T): one fetch head and one compose MLP each
  long long units = 0;          // hidden units of the widest compose MLP
};

// How the kr strategy computes one level of the cascade.
enum class LevelMode {
  Constant,  // no letter ever changes the level's value: no head, no unit
  Memory,    // resets only: a memory unit (the latest reset's value)
  Counters,  // Z_p counters for the group part, plus a memory unit when the level resets
  Scan,      // a parallel prefix over the level's transformations (non-solvable or too large)
};
const char* to_string(LevelMode mode);

// How the levels are wired together.
enum class CascadeForm {
  PerLevel,           // each level reads the levels above at t-1 through a fetch head
  TimeShiftedMemory,  // memory units only: each level also computed at earlier times
  ClampedWalk,        // a walk on a path (gridworld): two layers whatever the path's length
};
const char* to_string(CascadeForm form);

// One component (slot) of a level: a permutation-reset automaton on its tiles.
struct KrComponentPlan {
  int tiles = 0;
  std::string group;          // the holonomy group's name, "1" when trivial
  std::vector<int> counters;  // Z_p moduli along its composition series, top first; empty: none
};

struct KrLevelPlan {
  int level = 0;  // 1-based, the level read first is 1
  LevelMode mode = LevelMode::Constant;
  bool resets = false;  // the level has reset actions (a memory unit)
  int values = 0;       // coordinate values: the tiles of all components, plus the dummy
  std::vector<KrComponentPlan> components;
  ScanPlan scan;  // when mode == Scan
  // Counters with resets and a level below: a second memory head finds the latest reset before
  // t, so the level's coordinate at t-1 comes from its parts (reset value, counters there and
  // before t) in the same layer, and the level below reads those parts in its transitions
  // lookup instead of waiting for a fetch. previous_explicit: the levels further down also
  // need the coordinate at t-1 as a one-hot.
  bool previous_in_place = false, previous_explicit = false;
  // The last level of several, with resets and counters: the decoding lookup reads its parts
  // instead of a combined coordinate.
  bool coordinate_fused = false;
  // The sublayers (2L: layer L's attention, 2L + 1: its MLP) the level's operations occupy,
  // as the scheduler will place them; -1 when it has none (a constant level).
  int first_sublayer = -1, last_sublayer = -1;
};

// A clamped walk (CascadeForm::ClampedWalk): the states laid out on a path of cells 0..n-1 so
// that every letter maps cell c to clamp(c + shift, low, high). Gridworld's letters move one
// cell (shift -1 or +1 with low = 0, high = n - 1); other letters may move several cells,
// stay, or clamp inside the path (a reset: low = high).
enum class WalkForm {
  UnitSteps,   // every shift in {-1, 0, +1}, walls at the ends: latest visit of each class mod n
  Departures,  // any clamp maps: latest departure from each class mod n, per-letter combs
};
const char* to_string(WalkForm form);

struct WalkLetter {
  std::string name;
  int shift = 0, low = 0, high = 0;
  int step = 0;  // what the letter adds to the running sum S: shift, or the same mod n
  bool operator==(const WalkLetter&) const = default;
};

struct WalkPlan {
  WalkForm form = WalkForm::UnitSteps;
  int cells = 0;                       // n
  int initial = 0;                     // the initial state's cell
  std::vector<StateId> state_of_cell;  // the path: the state at each cell
  std::vector<WalkLetter> letters;     // per letter, in the automaton's order
  // The running sum S of the letters' moves (a shift per letter, the same mod n as the
  // letter's shift) lies in [sum_min, sum_max] up to max_len letters.
  long long sum_min = 0, sum_max = 0;
  // Predicted widths, checked against the built network: heads and MLP units per layer.
  std::vector<int> heads, mlp_units;
};

struct KrOptions {
  // Slots whose holonomy group is larger are computed by a scan instead of counters (the
  // lookups that combine counters grow with the square of the order).
  int max_counter_group_order = 720;
  // A cascade made only of memory units (aperiodic, trivial holonomy groups: gridworld,
  // flip-flops) is built with every level also computed at the earlier times the levels
  // below need, in K + 1 layers instead of about two per level.
  bool time_shifted_memory = true;
  // An automaton that is a clamped walk on a path (gridworld and its kin, recognised from
  // the letters' actions) is built in two layers instead of a cascade of n - 1 memory units.
  bool clamped_walk = true;
};

struct KrPlan {
  CascadeForm form = CascadeForm::PerLevel;
  int max_len = 0;
  // How counters sum their increments. 0: over all positions with one head (a layer per
  // counter), where plain float32 sums stay within the combs' 3/8: T <= 2048 and
  // (p - 1) T <= 6144 for the largest prime p. B > 0: in blocks of B ~ sqrt(T) positions, a
  // sum within the block plus a sum of the blocks' residues (two layers per counter).
  int counter_block = 0;
  std::vector<KrLevelPlan> levels;  // empty for a clamped walk (no cascade is built)
  WalkPlan walk;                    // when form == ClampedWalk
  int layers = 0;                   // depth of the network built from this plan
};

// The plan of the kr strategy for a decomposition with its complete action tables.
KrPlan plan_kr(const HolonomyDecomposition& decomposition, int max_len, const KrOptions& options);

// The plan of a clamped walk when the automaton is one (some letter moves one cell and every
// letter is a clamp map of the path it defines), else nothing. Needs no decomposition.
std::optional<KrPlan> plan_clamped_walk(const Automaton& automaton, int max_len);

// "level 2: (4,S4)  counters Z2 Z3 Z2 Z2 + memory unit", one line per level (the components
// as `krc decompose` prints them).
std::string plan_text(const KrPlan& plan);

// For the weights file's `compiler` metadata and `krc compile --json` (README documents them):
// {"form", "set_size", "monoid_size", "steps", "units"} and
// {"form", "layers", "levels": [{"level", "mode", "resets", "values", "tiles", "groups",
//  "counters", "scan"?, "sublayers": [first, last]}]}.
nlohmann::json to_json(const ScanPlan& plan);
nlohmann::json to_json(const KrPlan& plan);

}  // namespace krc
