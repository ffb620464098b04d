#include "strategies/kr/kr_strategy.hpp"

#include <algorithm>
#include <type_traits>

#include "ir/schedule.hpp"
#include "primitives/attention_heads.hpp"
#include "strategies/kr/cascade_context.hpp"

namespace krc {

namespace {

// The levels below read level d's coordinate at t-1: a fetch head copies it.
void fetch_previous(CascadeContext& ctx, int d) {
  const auto& x = ctx.coordinate[d];
  const Role role = ctx.role(RoleKind::PreviousCoordinate, d);
  Subspace prev = ctx.program.layout().allocate(ctx.tag(d) + " coordinate at t-1", x.labels, role);
  std::vector<Entry> copy;
  for (int v = 0; v < x.size(); ++v)
    for (auto [dim, w] : x.indicator[v]) copy.push_back({dim, prev[v], w});
  ctx.program.add(
      fetch_from_offset(ctx.features, 1, copy, ctx.tag(d) + ": fetch coordinate from t-1", role),
      ctx.tag(d + 1) + ": upper coordinates at t-1");
  ctx.previous[d] = Categorical::one_hot(prev, x.labels);
}

// The state from the coordinates: with one level a linear readout into the logits, otherwise
// a lookup over every reachable coordinate tuple (reading the last level's parts directly
// when its coordinate is fused into the decoding).
void decode(CascadeContext& ctx) {
  const auto& dec = ctx.dec;
  const int levels = dec.level_count();
  if (levels == 0) {
    ctx.program.unembed(ctx.features.one()[0], static_cast<int>(dec.decode({})), 1.0f);
    return;
  }
  if (levels == 1) {
    std::vector<bool> seen(dec.level(0).width, false);
    for (const auto& c : dec.reachable()) {
      if (seen[c[0]]) continue;
      seen[c[0]] = true;
      int q = static_cast<int>(dec.decode(c));
      for (auto [dim, w] : ctx.coordinate[0].indicator[c[0]]) ctx.program.unembed(dim, q, w);
    }
    return;
  }
  Subspace state =
      ctx.program.layout().allocate("state", ctx.automaton.states(), Role{RoleKind::State});
  MlpOp lookup;
  lookup.name = "decode coordinates into the state";
  lookup.role = Role{RoleKind::Decode};
  std::vector<Composite> inputs;
  for (int d = 0; d < levels; ++d)
    inputs.push_back(ctx.coordinate_parts[d] ? *ctx.coordinate_parts[d]
                                             : Composite::of(ctx.coordinate[d]));
  std::vector<const Composite*> pointers;
  for (const auto& c : inputs) pointers.push_back(&c);
  for (const auto& c : dec.reachable())
    add_composite_lookup(lookup, pointers, c, {{state[static_cast<int>(dec.decode(c))], 1.0f}});
  ctx.program.add(std::move(lookup), "decode");
  for (int q = 0; q < state.width; ++q) ctx.program.unembed(state[q], q, 1.0f);
}

void build_level(CascadeContext& ctx, int d, const KrCascade& cascade) {
  const KrLevelPlan& plan = cascade.plan.levels[d];
  switch (plan.mode) {
    case LevelMode::Scan:
      build_scan_level(ctx, d, *cascade.scans[d]);
      return;
    case LevelMode::Constant:
      ctx.coordinate[d] = ctx.constant_coordinate(d);
      ctx.previous[d] = ctx.coordinate[d];  // the same at every time
      return;
    case LevelMode::Memory:
    case LevelMode::Counters:
      build_counter_level(ctx, d, cascade.plan, cascade.analyses[d]);
      return;
  }
}

}  // namespace

Program build_kr(const KrCascade& cascade) {
  const KrPlan& plan = cascade.plan;
  CascadeContext ctx(*cascade.decomposition, plan.max_len);
  ctx.program.set_select_sharpness(cascade.select_sharpness);
  const int levels = cascade.decomposition->level_count();
  ctx.coordinate.resize(levels);
  ctx.previous.resize(levels);
  ctx.coordinate_parts.resize(levels);
  ctx.previous_parts.resize(levels);
  if (plan.form == CascadeForm::TimeShiftedMemory) {
    build_memory_cascade(ctx, plan);  // every level at once
    if (cascade.after_level)
      for (int d = 0; d < levels; ++d) cascade.after_level(ctx, d);
  } else {
    for (int d = 0; d < levels; ++d) {
      const KrLevelPlan& level = plan.levels[d];
      build_level(ctx, d, cascade);
      if (cascade.after_level) cascade.after_level(ctx, d);
      if (d + 1 < levels && level.mode != LevelMode::Constant && !level.previous_in_place)
        fetch_previous(ctx, d);
    }
  }
  decode(ctx);
  return std::move(ctx.program);
}

Program build_and_place(KrCascade& cascade) {
  Program program = build_kr(cascade);
  const Schedule placed = schedule(program);
  KrPlan& plan = cascade.plan;
  auto note = [&](const Role& role, int sublayer) {
    if (role.level == 0) return;  // the letter fetches, the decoding: no level's
    KrLevelPlan& level = plan.levels.at(role.level - 1);
    level.first_sublayer =
        level.first_sublayer < 0 ? sublayer : std::min(level.first_sublayer, sublayer);
    level.last_sublayer = std::max(level.last_sublayer, sublayer);
  };
  for (std::size_t i = 0; i < program.ops().size(); ++i) {
    const int sublayer = placed.sublayer[i];
    std::visit(
        [&](const auto& body) {
          if constexpr (std::is_same_v<std::decay_t<decltype(body)>, MlpOp>) {
            if (!body.blocks.empty()) {  // blocks without units are not in the network
              for (const auto& block : body.blocks)
                if (block.count > 0) note(block.role, sublayer);
              return;
            }
          }
          note(body.role, sublayer);
        },
        program.ops()[i].body);
  }
  plan.layers = placed.layers;
  return program;
}

}  // namespace krc
