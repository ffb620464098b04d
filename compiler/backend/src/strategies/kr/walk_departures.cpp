// A clamped walk whose letters are any clamp maps c -> clamp(c + shift, low, high) of the
// path (several step sizes, resets to any cell, walls inside the path), in two layers.
//
// Why it works. Unfold every letter into single-cell moves (unit_moves in clamped_walk.hpp);
// the unfolded walk is a unit-step walk, and it is in the letter's cell at the end of each
// letter. Let S be the free sum of the unfolded moves, mod n: only classes mod n are used
// here, so a letter may add any step of the right residue. As in clamped_walk.cpp, for a
// class r other than S_t's, the unfolded walk has stayed out of class r since it last left
// it, hence strictly between two neighbouring levels of it, below the upper one if it left
// upwards. So with a = (S_t - r) mod n,
//     x_t >= a  <=>  the walk last left class (S_t - a) mod n upwards,
// and x_t = #{a in 1..M : that class was last left upwards}. The virtual history before BOS
// (M steps down, s0 up) left the classes of the levels below 0 upwards and those above 0
// downwards.
//
// The network.
//   layer 1 attention  S_t, as in clamped_walk.cpp (dyadic heads).
//   layer 1 MLP        the residue of S_t, and per letter with moves a comb over S_t gated by
//                      the letter: the classes its unfolded moves leave (`departure` one-hot
//                      flags) and which of them they leave last upwards (`departure up`), as
//                      classes relative to S_t's: one ramp per integer of S's range.
//   layer 2 attention  per class r, the latest j whose letter left r (BOS: the virtual
//                      history), copying whether it left upwards: exact_latest_flagged.
//   layer 2 MLP        G_a = [x_t >= a] = sum_rho [S_t = rho (mod n)] [up of class rho - a]: an
//                      AND unit per (rho, class), writing cell a + 1, cell a - 1 - 1; cell 0
//                      gets 1. n (n - 1) + 1 units.
//
// Exact in float32 for the reasons clamped_walk.cpp gives: integer sums, integer ramps, the
// combs' gate adds (hi - lo + 1) (gate - 1), an integer, and the AND units read exact 0/1.
//
// Legend: n cells, M = n - 1, s0 the initial cell, rho S_t's class, r a class, o a class
// relative to S's (r = S + o mod n).
#include "krc/automata/integer_math.hpp"
#include "primitives/exact_attention.hpp"
#include "strategies/kr/clamped_walk.hpp"
#include "strategies/kr/walk_context.hpp"

namespace krc {

namespace {

// Layer 1: per letter, the classes it leaves and the direction, as a gated comb over S.
void add_departure_combs(WalkContext& ctx, const Subspace& flag, const Subspace& up) {
  const int n = ctx.walk.cells;
  MlpOp combs;
  combs.name = "walk: classes each letter leaves";
  combs.role = Role{RoleKind::Departure};
  for (std::size_t a = 0; a < ctx.walk.letters.size(); ++a) {
    const std::vector<int> dep = departures(ctx.walk.letters[a], n);
    combs.begin_block("walk: classes " + ctx.walk.letters[a].name + " leaves",
                      Role{RoleKind::Departure, 0, static_cast<int>(a) + 1});
    const Terms gate{{ctx.features.tokens()[static_cast<int>(a)], 1.0f}};
    add_integer_function(
        combs, ctx.sum_input(),
        [&](long long m) {
          Terms out;
          for (int o = 0; o < n; ++o) {
            if (dep[o] == 0) continue;
            out.emplace_back(flag[floor_mod(m + o, n)], 1.0f);
            if (dep[o] > 0) out.emplace_back(up[floor_mod(m + o, n)], 1.0f);
          }
          return out;
        },
        &gate);
  }
  if (combs.units > 0) ctx.program.add(std::move(combs), "walk departures");
}

}  // namespace

void build_departure_walk(WalkContext& ctx) {
  const int n = ctx.walk.cells;
  auto& layout = ctx.program.layout();
  std::vector<std::string> classes;
  for (int r = 0; r < n; ++r) classes.push_back(std::to_string(r));
  const Subspace flag = layout.allocate("walk departure", classes, Role{RoleKind::Departure});
  const Subspace up = layout.allocate("walk departure up", classes, Role{RoleKind::DepartureUp});
  add_departure_combs(ctx, flag, up);
  const int bos = ctx.features.bos()[0];
  std::vector<Subspace> last_up;
  for (int r = 0; r < n; ++r) {
    const Role role{RoleKind::LatestDeparture, 0, r + 1};
    last_up.push_back(
        layout.allocate_scalar("walk left class " + std::to_string(r) + " upwards last", role));
    std::vector<Entry> copy{{up[r], last_up[r][0], 1.0f}};
    if (ctx.virtual_level(r) < 0) copy.push_back({bos, last_up[r][0], 1.0f});
    ctx.program.add(
        exact_latest_flagged(ctx.features, {{flag[r], 1.0f}, {bos, 1.0f}}, copy,
                             "walk: latest departure from class " + std::to_string(r), role),
        "walk latest departures");
  }
  MlpOp decode;
  decode.name = "walk: cell from the latest departures";
  decode.role = Role{RoleKind::Decode};
  for (int rho = 0; rho < n; ++rho)
    for (int r = 0; r < n; ++r) {
      if (r == rho) continue;
      const int a = floor_mod(rho - r, n);  // class r is S_t's class minus a: cell >= a if left up
      decode.add_unit({{ctx.residue[rho], 1.0f}, {last_up[r][0], 1.0f}}, -1.0f,
                      {{ctx.cell[a], 1.0f}, {ctx.cell[a - 1], -1.0f}});
    }
  decode.add_unit({{ctx.one, 1.0f}}, 0.0f, {{ctx.cell[0], 1.0f}});
  ctx.program.add(std::move(decode), "decode");
}

}  // namespace krc
