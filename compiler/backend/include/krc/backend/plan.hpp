#pragma once
// What the backend decides before it writes a single weight: the typed plans of the
// strategies. A plan is a pure function of the automaton (or its decomposition) and the
// options; the builders take it as their input, `krc compile` prints it. Depths and sublayers
// are not predicted by a rule of their own: they are the scheduler's placement of the
// planned operations (compiler/README.md, "Plan and build").
//
// Legend: Q states, T = max_len, K levels of the cascade, p a counter's prime modulus.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/decompose/holonomy.hpp"

namespace krc {

// How a parallel prefix holds a transformation of its set X (|X| = n); primitives/prefix_scan.hpp
// gives each form's widths.
enum class ScanForm {
  ElementOneHot,       // one dimension per element of the generated monoid M; |M|^2 units a step
  StateMapOneHot,      // n one-hot blocks of width n (block q: the image of q); n^3 units a step
  IntegerCoordinates,  // n integers f(q) (Liu et al.'s Theorem 1 size); 2n^2 + 2n units a step
  BinaryCoordinates,   // n codes of b = ceil(log2 n) +-1 bits of f(q); n^2 b + 2nb + 1 units a
                       // step, every value in {-1, 0, 1}: Theorem 1's size up to the factor b,
                       // exact in bf16 and fp16 (chosen under --precision bf16|fp16 only)
  DigitCoordinates,    // the bits, and f(q) as r digits of base B <= 256 (bf16) or 2048 (fp16):
                       // n^2 r compose units and n r B that turn digits into bits, two layers a
                       // step; every value a small integer (chosen where binary coordinates
                       // are over the unit limit or the memory budget)
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
};
const char* to_string(CascadeForm form);

// How a counter sums its increments over positions 1..t (compiler/README.md, "Counting").
enum class CounterSum {
  Whole,   // one head over every position, denominator max_len + 1: plain float32 stays within
           // the combs' 3/8 for T <= 2048 and (p - 1) T <= 6144 (p the largest prime)
  Dyadic,  // one head per bit of t, each over an aligned block of 2^k positions with weights
           // exactly 2^-k (primitives/exact_attention.hpp): an exact count, the same one
           // layer at every max-len, but its comb's sums are exact only summed in unit order
           // (while (p - 1) T < 2^19); not in every BLAS order (issue 36): only when forced
  Blocks,  // blocks of B ~ sqrt(T): a sum in the block plus the blocks' residues, two layers
           // more; small combs, exact in any order (the default past Whole's range)
};
const char* to_string(CounterSum sum);
CounterSum counter_sum_from_string(const std::string& s);  // throws std::invalid_argument
std::vector<std::string> counter_sum_names();

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
  // The sublayers (2L: layer L's attention, 2L + 1: its MLP) the scheduler placed the level's
  // operations in; -1 when it has none (a constant level).
  int first_sublayer = -1, last_sublayer = -1;
};

// A clamped walk (the kr strategy's form for gridworld and its kin, no cascade): the states
// laid out on a path of cells 0..n-1 so that every letter maps cell c to
// clamp(c + shift, low, high). Gridworld's letters move one cell (shift -1 or +1 with low = 0,
// high = n - 1); other letters may move several cells, stay, or clamp inside the path (a
// reset: low = high).
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
  int max_len = 0;
  int cells = 0;                       // n
  int initial = 0;                     // the initial state's cell
  std::vector<StateId> state_of_cell;  // the path: the state at each cell
  std::vector<WalkLetter> letters;     // per letter, in the automaton's order
  // The running sum S of the letters' moves (a shift per letter, the same mod n as the
  // letter's shift) lies in [sum_min, sum_max] up to max_len letters.
  long long sum_min = 0, sum_max = 0;
  // Predicted widths, checked against the built network: heads and MLP units per layer.
  std::vector<int> heads, mlp_units;
  int layers = 0;  // the scheduler's depth for the walk's operations (1 for two cells, else 2)
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
  // lambda of the position fetches from t - k (compile.hpp's Norm sets it).
  float select_sharpness = 20.0f;
  // Forces how counters sum (tests of a method outside its lengths); the planner picks else.
  std::optional<CounterSum> counter_sum;
};

struct KrPlan {
  CascadeForm form = CascadeForm::PerLevel;
  int max_len = 0;
  // How counters sum their increments, and B for CounterSum::Blocks (else 0).
  CounterSum counter_sum = CounterSum::Whole;
  int counter_block = 0;
  std::vector<KrLevelPlan> levels;
  int layers = 0;  // the scheduler's depth for the cascade's operations
};

// The plan of the kr strategy for a decomposition with its complete action tables (its
// placement comes from scheduling the cascade's operations).
KrPlan plan_kr(const HolonomyDecomposition& decomposition, int max_len, const KrOptions& options);

// The plan of a clamped walk when the automaton is one (some letter moves one cell and every
// letter is a clamp map of the path it defines), else nothing. Needs no decomposition.
std::optional<WalkPlan> plan_clamped_walk(const Automaton& automaton, int max_len);

// "level 2: (4,S4)  counters Z2 Z3 Z2 Z2 + memory unit", one line per level (the components
// as `krc decompose` prints them).
std::string plan_text(const KrPlan& plan);
// "clamped walk on 9 cells from cell 4 (unit steps): L -1, R +1", one line.
std::string plan_text(const WalkPlan& walk);

// For the weights file's `compiler` metadata and `krc compile --json` (README documents them):
// {"form", "set_size", "monoid_size", "steps", "units"} and
// {"form", "layers", "levels": [{"level", "mode", "resets", "values", "tiles", "groups",
//  "counters", "scan"?, "sublayers": [first, last]}]}.
nlohmann::json to_json(const ScanPlan& plan);
nlohmann::json to_json(const KrPlan& plan);
// A walk in the same shape: {"form": "clamped walk", "layers", "levels": [], "walk": {"form",
// "cells", "initial", "letters", "sum", "heads", "mlp_units"}}.
nlohmann::json to_json(const WalkPlan& walk);

// ---- onelayer: one attention layer as a contextual mapping (Yun et al. 2020; Kajitsuka and
// Sato 2024), then feed-forward layers that read the state off the value. Legend: L = max_len,
// t a prefix's length, z the value one rank-1 head gives a prefix, D the letter classes
// (letters with distinct actions), lambda the head's sharpness.

// How the head turns a prefix into one number z.
enum class ContextCode {
  Counts,         // the letters commute: every letter weighs the same (a constant denominator,
                  // as a Z_p counter's sum), z = the letter counts in mixed radix (L + 1)
  LatestFirst,    // weights e^(lambda j) grow with the position j: z reads the prefix as a
                  // fraction in base e^lambda > D + 1, the latest letter its leading digit
  EarliestFirst,  // weights e^(-lambda j): the first letter is the leading digit
};
const char* to_string(ContextCode code);

struct OneLayerOptions {
  int max_units = 2048;            // hidden units of the decoding, both feed-forward blocks
  long long max_values = 1 << 17;  // prefix values the planner enumerates
};

// One threshold of the decoding: every prefix of the run below has z <= value, every prefix
// of the run above has gain * (z - value) >= 1, under the worst-case float32 error.
struct ValueThreshold {
  float value = 0.0f;
  float gain = 1.0f;
};

struct OneLayerPlan {
  ContextCode code = ContextCode::LatestFirst;
  int max_len = 0;      // L: the longest word
  int largest_len = 0;  // the largest L within the limits and exact in float32
  int classes = 0;      // D: distinct letter actions (Counts: those other than the identity)
  std::vector<int> letter_code;  // per letter: its digit 1..D, or its count weight (0: none)
  float sharpness = 0.0f;        // lambda (a multiple of 1/32, so that scores are exact); Counts: 0
  long long values = 0;          // distinct values z takes over all prefixes of length <= L
  long long transformations = 0;   // distinct transformations of those prefixes: the fewest
                                   // values any mapping may use (equal ones may share)
  long long reachable_states = 0;  // states those prefixes reach: the fewest runs possible
  // Sorted by z, the values fall into runs of one state; thresholds separate the runs.
  std::vector<ValueThreshold> thresholds;  // ascending
  std::vector<int> run_states;             // thresholds.size() + 1
  double relative_error = 0.0;             // worst-case float32 error of z, relative to z
  double safety = 0.0;  // the smallest gap at a threshold over what the error can take
  int units() const { return 2 * static_cast<int>(thresholds.size()); }
  // 1 attention layer (and the thresholds' MLP), 1 feed-forward layer for the decoding.
  int layers() const { return thresholds.empty() ? 1 : 2; }
};

// The plan for words up to max_len letters; throws LimitError, naming the largest max_len
// this automaton allows, when max_len is beyond the options' limits or float32 exactness.
OneLayerPlan plan_onelayer(const Automaton& automaton, int max_len, const OneLayerOptions& options);

// "contextual mapping: ..." lines: the code, the values against what the automaton needs,
// the decoding, the float32 margin and the largest max_len.
std::string plan_text(const OneLayerPlan& plan);

// {"code", "max_len", "largest_len", "classes", "letter_code", "sharpness", "values",
//  "transformations", "reachable_states", "runs", "units", "layers", "relative_error",
//  "safety"} (README documents it).
nlohmann::json to_json(const OneLayerPlan& plan);

}  // namespace krc
