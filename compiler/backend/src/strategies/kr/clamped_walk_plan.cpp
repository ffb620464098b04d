// Recognising a clamped walk and planning its network (krc/backend/plan.hpp, WalkPlan).
//
// A letter that moves every cell one step up the path (clamped at the top) shows the path:
// its functional graph is a chain from the one state without a preimage to its one fixed
// point through every state. In that order each letter must map cells by a clamp map
// clamp(c + shift, low, high): non-decreasing, rising by 0 or 1 per cell, the rises in one
// run. The path and the letters' maps then fix the automaton up to renaming, so any
// automaton isomorphic to a gridworld is recognised, whatever its names and initial state.
//
// Legend: n cells, M = n - 1, T = max_len, f a letter's action on cells.
#include <algorithm>

#include "ir/schedule.hpp"
#include "krc/automata/integer_math.hpp"
#include "strategies/kr/clamped_walk.hpp"

namespace krc {

namespace {

// The states along the path `f` climbs, when f is one step up a path of all the states.
std::optional<std::vector<StateId>> path_climbed_by(const Transformation& f) {
  const std::size_t n = f.size();
  std::vector<int> preimages(n, 0);
  for (StateId q : f) ++preimages[q];
  const auto start = std::find(preimages.begin(), preimages.end(), 0);
  if (start == preimages.end() || std::count(preimages.begin(), preimages.end(), 0) != 1)
    return std::nullopt;
  std::vector<StateId> cells{static_cast<StateId>(start - preimages.begin())};
  while (f[cells.back()] != cells.back()) {
    if (cells.size() == n) return std::nullopt;  // a cycle: never reaches a fixed point
    cells.push_back(f[cells.back()]);
  }
  if (cells.size() != n) return std::nullopt;
  return cells;
}

// The clamp map a letter is on the path, if it is one. Constant maps onto an end of the path
// are moves by M (so that gridworld_2's letters are one-cell moves).
std::optional<WalkLetter> clamp_map(const std::vector<int>& g) {
  const int top = static_cast<int>(g.size()) - 1;
  int first_rise = -1, last_rise = -1;
  for (int c = 0; c < top; ++c) {
    const int rise = g[c + 1] - g[c];
    if (rise < 0 || rise > 1) return std::nullopt;
    if (rise == 0) continue;
    if (first_rise >= 0 && last_rise != c - 1) return std::nullopt;  // two runs of rises
    if (first_rise < 0) first_rise = c;
    last_rise = c;
  }
  WalkLetter letter{{}, 0, g[0], g[top]};
  if (first_rise >= 0) {
    // Walls the map never presses against are the path's ends: L of gridworld maps the top
    // to M - 1, yet it is clamp(c - 1, 0, M), a unit step.
    letter.shift = g[first_rise] - first_rise;
    if (letter.low == letter.shift) letter.low = 0;
    if (letter.high == top + letter.shift) letter.high = top;
  } else if (letter.low == 0 || letter.low == top) {
    letter.shift = letter.low == 0 ? -top : top;
    letter.low = 0;
    letter.high = top;
  }
  return letter;
}

// The step a letter adds to the running sum: its moves' sum, reduced mod n to at most n/2 in
// magnitude when only classes mod n matter.
int step_of(const WalkLetter& letter, int cells, WalkForm form) {
  const std::vector<int> moves = unit_moves(letter, cells);
  int sum = 0;
  for (int m : moves) sum += m;
  if (form == WalkForm::UnitSteps) return sum;
  int residue = ((sum % cells) + cells) % cells;
  return residue > cells / 2 ? residue - cells : residue;
}

// Units of the comb that writes a letter's departures (primitives/integer_comb.hpp): a bend
// at every integer of the sum's range unless the pattern is the same for every class.
long long departure_units(const WalkLetter& letter, int cells, long long range) {
  const std::vector<int> dep = departures(letter, cells);
  if (std::all_of(dep.begin(), dep.end(), [](int d) { return d == 0; })) return 0;
  const bool uniform = std::all_of(dep.begin(), dep.end(), [&](int d) { return d == dep[0]; });
  return (uniform ? 0 : range) + 1;
}

void predict_widths(WalkPlan& walk, int max_len) {
  const int n = walk.cells;
  const long long range = walk.sum_max - walk.sum_min;
  walk.heads = {std::max(1, ceil_log2(std::int64_t{max_len} + 1)), n};
  long long first = range + 1;  // the residue of S: a bend at every integer, and S's least value
  if (walk.form == WalkForm::Departures)
    for (const auto& letter : walk.letters) first += departure_units(letter, n, range);
  // Unit steps: per class, M ramps of S - (S at its latest visit); departures: per class of S
  // and other class, an AND. One more unit for cell 0.
  const long long second = static_cast<long long>(n) * (n - 1) + 1;
  walk.mlp_units = {static_cast<int>(first), static_cast<int>(second)};
}

}  // namespace

std::vector<int> unit_moves(const WalkLetter& letter, int cells) {
  const int top = cells - 1;
  int first = 0, second = 0, third = 0, sign = -1;  // L^first R^second L^third
  if (letter.low == letter.high) {
    sign = 1;  // R^(M-c) L^M R^c
    first = top - letter.low;
    second = top;
    third = letter.low;
  } else if (letter.shift <= letter.low) {
    first = letter.low - letter.shift;
    second = letter.low + top - letter.high;
    third = top - letter.high;
  } else {  // the mirror image of the case above
    sign = 1;
    first = top - letter.high + letter.shift;
    second = top - letter.high + letter.low;
    third = letter.low;
  }
  std::vector<int> moves(first, sign);
  moves.insert(moves.end(), second, -sign);
  moves.insert(moves.end(), third, sign);
  return moves;
}

std::vector<int> departures(const WalkLetter& letter, int cells) {
  const std::vector<int> moves = unit_moves(letter, cells);
  std::vector<int> last(cells, 0);  // by class of the level left, relative to the start
  int level = 0;
  for (int m : moves) {
    last[((level % cells) + cells) % cells] = m;
    level += m;
  }
  std::vector<int> relative(cells, 0);
  for (int c = 0; c < cells; ++c) relative[((c - level) % cells + cells) % cells] = last[c];
  return relative;
}

std::optional<WalkPlan> recognise_clamped_walk(const Automaton& automaton, int max_len) {
  const int n = static_cast<int>(automaton.state_count());
  // Two cells are one memory unit, a single layer as a cascade.
  if (n < 3) return std::nullopt;
  for (LetterId climber = 0; climber < automaton.letter_count(); ++climber) {
    const auto path = path_climbed_by(automaton.letter_action(climber));
    if (!path) continue;
    std::vector<int> cell_of(n);
    for (int c = 0; c < n; ++c) cell_of[(*path)[c]] = c;
    WalkPlan walk;
    walk.max_len = max_len;
    walk.cells = n;
    walk.state_of_cell = *path;
    walk.initial = cell_of[automaton.initial()];
    bool unit = true;
    for (LetterId a = 0; a < automaton.letter_count(); ++a) {
      std::vector<int> g(n);
      for (int c = 0; c < n; ++c) g[c] = cell_of[automaton.step((*path)[c], a)];
      const auto letter = clamp_map(g);
      if (!letter) return std::nullopt;  // the path is the only candidate
      unit = unit && letter->low == 0 && letter->high == n - 1 && std::abs(letter->shift) <= 1;
      walk.letters.push_back(*letter);
      walk.letters.back().name = automaton.letter_name(a);
    }
    walk.form = unit ? WalkForm::UnitSteps : WalkForm::Departures;
    for (auto& letter : walk.letters) {
      letter.step = step_of(letter, n, walk.form);
      const long long step = letter.step;
      walk.sum_min = std::min(walk.sum_min, step * max_len);
      walk.sum_max = std::max(walk.sum_max, step * max_len);
    }
    predict_widths(walk, max_len);
    return walk;
  }
  return std::nullopt;
}

std::optional<WalkPlan> plan_clamped_walk(const Automaton& automaton, int max_len) {
  auto walk = recognise_clamped_walk(automaton, max_len);
  if (walk) walk->layers = schedule(build_clamped_walk(automaton, *walk)).layers;
  return walk;
}

std::string plan_text(const WalkPlan& walk) {
  std::string out = "clamped walk on " + std::to_string(walk.cells) + " cells from cell " +
                    std::to_string(walk.initial) + " (" + to_string(walk.form) + "):";
  for (std::size_t a = 0; a < walk.letters.size(); ++a) {
    const WalkLetter& l = walk.letters[a];
    out += a ? ", " : " ";
    out += l.name + " ";
    if (l.low == l.high) {
      out += "to " + std::to_string(l.low);
    } else {
      out += (l.shift > 0 ? "+" : "") + std::to_string(l.shift);
      if (l.low > 0 || l.high < walk.cells - 1)
        out += " in [" + std::to_string(l.low) + "," + std::to_string(l.high) + "]";
    }
  }
  return out + "\n";
}

nlohmann::json to_json(const WalkPlan& walk) {
  nlohmann::json letters = nlohmann::json::array();
  for (const auto& l : walk.letters)
    letters.push_back({{"letter", l.name},
                       {"shift", l.shift},
                       {"low", l.low},
                       {"high", l.high},
                       {"step", l.step}});
  const nlohmann::json inner = {{"form", to_string(walk.form)},
                                {"cells", walk.cells},
                                {"initial", walk.initial},
                                {"letters", letters},
                                {"sum", {walk.sum_min, walk.sum_max}},
                                {"heads", walk.heads},
                                {"mlp_units", walk.mlp_units}};
  return {{"form", "clamped walk"},
          {"layers", walk.layers},
          {"levels", nlohmann::json::array()},
          {"walk", inner}};
}

}  // namespace krc
