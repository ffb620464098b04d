// A clamped walk in two layers (Liu et al. 2023, Theorem 3; the unit-step form here, the
// general one in walk_departures.cpp), exact in float32 at any length below 2^22.
//
// Why it works. Let S_t be the free sum of the moves (no clamping) and extend the word on the
// left by a virtual history that takes any cell to the initial cell s0: M steps down, then s0
// up, with S_0 = 0 at BOS, so that the levels -s0 .. M - s0 (one of each class mod n) were
// visited in it. Since steps are -1, 0 or +1, S passes every level between two it visits.
// Take a class r other than S_t's and the latest time j <= t with S_j = r (mod n). From j to
// t the sum avoids the class, so it stays strictly between two neighbouring levels of it:
// S_j = S_t - a (visited from below) or S_j = S_t - a + n (from above), a = (S_t - r) mod n.
// Now the walk x: looking back from t, the sum first spans M levels in the shortest window
// [j*, t] with max - min = M, and x_t = S_t - min over that window (the walk was pinned at the
// bottom at the window's last minimum, or at the top at its last maximum, and has moved with
// S since). Level S_t - a lies in the window exactly when it was visited after level
// S_t - a + n, so
//     x_t >= a  <=>  the latest visit to class (S_t - a) mod n came from below,
// and x_t = #{classes r : 1 <= D_r <= M}, D_r = S_t - (S at the latest visit to r): the D_r
// that are positive are exactly 1, ..., x_t, the others are -M .. 0.
//
// The network.
//   layer 1 attention  S_t: one head per bit of t, each summing one dyadic block of the prefix
//                      (primitives/exact_attention.hpp), into its own dimension.
//   layer 1 MLP        one-hot of S_t mod n: one ramp ReLU(S - b) per integer b of S's range
//                      (primitives/integer_comb.hpp), 2 T + 1 units for moves of both signs.
//   layer 2 attention  per class r, the latest j with S_j = r (mod n), BOS standing for the
//                      virtual history (its value there: the level of class r in it), copying
//                      S_j: exact_latest_flagged, weight exactly 1 on j.
//   layer 2 MLP        cell one-hot: per class, [D_r = a] for a in 1..M as ramps ReLU(D_r - b),
//                      b = 0 .. M - 1 (M units); cell a = #{D_r = a} - #{D_r = a + 1}, cell 0
//                      gets 1 - #{D_r = 1}. n (n - 1) + 1 units.
//   unembedding        cell c -> its state, weight 1: margin 1 (right state 1, others 0).
//
// Exact in float32. The dyadic heads' weights are exactly 2^-k and their outputs exact
// integers (exact_attention.hpp); S_t is the sum of at most 23 of them, |S_t| <= T. The comb's
// units are integers |S - b| <= 2T + 1 and each run of consecutive units sums to an integer
// below 6 T, so its output is exactly 0 or 1 summed in unit order. The latest-visit heads' scores
// are multiples of 128 below 2^31 (exact), the runner-up at least 128 below (weight exactly
// 0), so they copy S_j exactly. D_r is then an exact integer in [-M, M], the decoding units are
// integers below n, and the cell one-hot is exactly 0 or 1. In float64 the discarded weights
// are below e^-128 instead of 0, far inside every margin. Widths: d_model = letters + 3 n +
// 3 B + 5 (B = bits of T: 14 at T = 8192), 14 + n heads, 2 T + n (n - 1) + 2 hidden units.
//
// Legend: n cells, M = n - 1, s0 the initial cell, T = max_len, S the sum of the moves,
// r a class mod n, V_r = S at the latest visit to class r, D_r = S_t - V_r.
#include "strategies/kr/clamped_walk.hpp"

#include "krc/automata/integer_math.hpp"
#include "primitives/exact_attention.hpp"
#include "primitives/integer_comb.hpp"
#include "strategies/kr/walk_context.hpp"

namespace krc {

namespace {

std::vector<std::string> class_labels(int n) {
  std::vector<std::string> labels;
  for (int r = 0; r < n; ++r) labels.push_back(std::to_string(r));
  return labels;
}

}  // namespace

WalkContext::WalkContext(Program& p, const WalkPlan& w)
    : program(p), features(p), walk(w), one(features.one()[0]) {}

int WalkContext::virtual_level(int r) const {
  for (int level = -walk.initial; level < walk.cells - walk.initial; ++level)
    if (floor_mod(level, walk.cells) == r) return level;
  return 0;
}

// Layer 1: S as one dimension per dyadic head, then its residue mod n.
void WalkContext::add_sum_and_residue() {
  auto& layout = program.layout();
  const Subspace& tokens = features.tokens();
  Terms moves;
  for (std::size_t a = 0; a < walk.letters.size(); ++a)
    if (walk.letters[a].step != 0)
      moves.emplace_back(tokens[static_cast<int>(a)], static_cast<float>(walk.letters[a].step));
  sum =
      add_dyadic_sum(features, moves, "walk sum", "walk sum", Role{RoleKind::WalkSum}, "walk sum");
  residue = layout.allocate("walk residue", class_labels(walk.cells), Role{RoleKind::WalkResidue});
  MlpOp comb;
  comb.name = "walk sum mod " + std::to_string(walk.cells);
  comb.role = Role{RoleKind::WalkResidue};
  add_integer_function(comb, sum_input(), [&](long long m) {
    return Terms{{residue[floor_mod(m, walk.cells)], 1.0f}};
  });
  program.add(std::move(comb), "walk residue");
}

void WalkContext::allocate_cells(const std::vector<std::string>& state_names) {
  std::vector<std::string> labels;
  for (StateId q : walk.state_of_cell) labels.push_back(state_names[q]);
  cell = program.layout().allocate("cell", labels, Role{RoleKind::State});
  for (int c = 0; c < walk.cells; ++c)
    program.unembed(cell[c], static_cast<int>(walk.state_of_cell[c]), 1.0f);
}

// Layer 2 of the unit-step form: the latest visit to each class, then the cell.
void build_unit_step_walk(WalkContext& ctx) {
  const int n = ctx.walk.cells;
  auto& layout = ctx.program.layout();
  std::vector<Subspace> visit;
  for (int r = 0; r < n; ++r) {
    const Role role{RoleKind::LatestVisit, 0, r + 1};
    visit.push_back(
        layout.allocate_scalar("walk sum at the latest visit to class " + std::to_string(r), role));
    Terms flag{{ctx.residue[r], 1.0f}};
    if (r != 0) flag.emplace_back(ctx.features.bos()[0], 1.0f);  // BOS is in class 0 already
    std::vector<Entry> copy;
    for (auto [dim, w] : ctx.sum) copy.push_back({dim, visit[r][0], w});
    const int level = ctx.virtual_level(r);
    if (level != 0) copy.push_back({ctx.features.bos()[0], visit[r][0], static_cast<float>(level)});
    ctx.program.add(exact_latest_flagged(ctx.features, flag, copy,
                                         "walk: latest visit to class " + std::to_string(r), role),
                    "walk latest visits");
  }
  MlpOp decode;
  decode.name = "walk: cell from the latest visits";
  decode.role = Role{RoleKind::Decode};
  for (int r = 0; r < n; ++r) {
    IntegerInput d{ctx.sum, -(n - 1), n - 1, ctx.one};
    d.z.emplace_back(visit[r][0], -1.0f);
    add_integer_function(decode, d, [&](long long a) {
      if (a < 1) return Terms{};
      return Terms{{ctx.cell[static_cast<int>(a)], 1.0f},
                   {ctx.cell[static_cast<int>(a) - 1], -1.0f}};
    });
  }
  decode.add_unit({{ctx.one, 1.0f}}, 0.0f, {{ctx.cell[0], 1.0f}});
  ctx.program.add(std::move(decode), "decode");
}

Program build_clamped_walk(const Automaton& automaton, const WalkPlan& walk) {
  Program program(vocabulary_of(automaton), automaton.states(), walk.max_len);
  WalkContext ctx(program, walk);
  ctx.allocate_cells(automaton.states());
  ctx.add_sum_and_residue();
  if (walk.form == WalkForm::UnitSteps)
    build_unit_step_walk(ctx);
  else
    build_departure_walk(ctx);
  return program;
}

}  // namespace krc
