// The memory part of a counter or memory level (see counter_level.hpp): the latest reset's value
// and counters, the coordinate c_r . y(r)^-1 . y(t) as a composite of those parts, and, for
// the level below, the same before t (a second memory head over the flags of t-1).
//
// Exactness: the memory heads select the latest flagged position with a margin of lambda
// (primitives/attention_heads.hpp); the composites' lookups read exact one-hots.
#include "primitives/attention_heads.hpp"
#include "strategies/kr/counter_level.hpp"

namespace krc {

// The reset flag and value of position t-1, for the memory head that looks before t.
void CounterLevelBuilder::add_reset_fetch() {
  auto& layout = ctx_.program.layout();
  const Role flag_role = role(RoleKind::ResetFlag, 0, 0, 1);
  const Role value_role = role(RoleKind::ResetValue, 0, 0, 1);
  flag_before_ = layout.allocate_scalar(ctx_.tag(d_) + " reset flag at t-1", flag_role);
  reset_value_before_ = layout.allocate(ctx_.tag(d_) + " reset value at t-1", labels_, value_role);
  std::vector<Entry> copy{{flag_[0], flag_before_[0], 1.0f}};
  for (int v = 0; v < level_.width; ++v)
    copy.push_back({reset_value_[v], reset_value_before_[v], 1.0f});
  ctx_.program.add(
      fetch_from_offset(ctx_.features, 1, copy, ctx_.tag(d_) + ": fetch reset from t-1", flag_role),
      ctx_.tag(d_) + ": memory");
}

// A memory head: the latest j <= t whose `flag` is set (BOS always is), copying the reset value
// and every counter there. Shift 0 reads the resets and counters at j; shift 1 reads the flags
// "j-1 was a reset" and the counters before j, so it finds the latest reset before t.
CounterLevelBuilder::AtReset CounterLevelBuilder::add_memory_head(int shift) {
  auto& layout = ctx_.program.layout();
  const std::string when = shift == 0 ? "" : " before t";
  const Subspace& value = shift == 0 ? reset_value_ : reset_value_before_;
  Subspace copied = layout.allocate(ctx_.tag(d_) + " value at latest reset" + when, labels_,
                                    role(RoleKind::Memory, 0, 0, shift));
  std::vector<Entry> copy;
  for (int v = 0; v < level_.width; ++v) copy.push_back({value[v], copied[v], 1.0f});
  AtReset at{ctx_.keep(Categorical::one_hot(copied, labels_)), {}};
  for (const auto& c : components_) {
    at.counters.emplace_back();
    const auto& sources = shift == 0 ? c.now : c.before;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const Subspace& source = sources[i];
      Subspace there =
          layout.allocate(source.name + " at latest reset" + when, residue_labels(source.width),
                          role(RoleKind::Memory, c.slot + 1, static_cast<int>(i) + 1, shift));
      for (int r = 0; r < source.width; ++r) copy.push_back({source[r], there[r], 1.0f});
      at.counters.back().push_back(ctx_.keep(Categorical::one_hot(there, {})));
    }
  }
  ctx_.program.add(latest_flagged(ctx_.features, (shift == 0 ? flag_ : flag_before_)[0], copy,
                                  ctx_.tag(d_) + ": memory (latest reset" + when + ")",
                                  role(RoleKind::Memory, 0, 0, shift)),
                   ctx_.tag(d_) + ": memory");
  return at;
}

// x = c_r . y(r)^-1 . y as a lookup over its parts: the reset value c_r, the counters at the
// reset and the counters now (shift 0) or before t (shift 1). Values outside the components
// with counters (and the dummy) are the reset value itself.
Composite CounterLevelBuilder::coordinate_parts(const AtReset& at, int shift) {
  Composite x;
  x.labels = labels_;
  x.alternatives.resize(level_.width);
  for (int v = 0; v < level_.width; ++v)
    if (v == level_.dummy || !has_counters(level_.slot_of[v]))
      x.alternatives[v].push_back({{at.value, v}});
  for (std::size_t c = 0; c < components_.size(); ++c) {
    const auto& g = components_[c].group;
    std::vector<const Categorical*> now;
    for (const auto& s : shift == 0 ? components_[c].now : components_[c].before)
      now.push_back(ctx_.keep(Categorical::one_hot(s, {})));
    const int first = level_.first_value[components_[c].slot];
    const int tiles = static_cast<int>(level_.slots[components_[c].slot].tiles.size());
    for (int tile = 0; tile < tiles; ++tile)
      for (int then = 0; then < g.order(); ++then)
        for (int y = 0; y < g.order(); ++y) {
          Alternative alt{{at.value, first + tile}};
          for (std::size_t i = 0; i < now.size(); ++i) {
            alt.push_back({at.counters[c][i], g.exponents(then)[i]});
            alt.push_back({now[i], g.exponents(y)[i]});
          }
          const int z = g.multiply(g.inverse(then), y);
          x.alternatives[first + g.element(z)[tile]].push_back(std::move(alt));
        }
  }
  return x;
}

// The categorical of a composite: an alternative of one condition is read linearly, the others
// are lookup units writing a one-hot block.
Categorical CounterLevelBuilder::combine(const Composite& parts, const std::string& name,
                                         int shift) {
  Categorical x;
  x.labels = labels_;
  x.indicator.resize(parts.size());
  MlpOp mlp;
  mlp.name = ctx_.tag(d_) + ": " + name + " = reset value . (product at reset)^-1 . product";
  mlp.role = role(RoleKind::Coordinate, 0, 0, shift);
  Subspace out;
  for (int v = 0; v < parts.size(); ++v)
    for (const Alternative& alt : parts.alternatives[v]) {
      if (alt.size() == 1) {
        for (auto [dim, w] : alt[0].input->indicator[alt[0].value])
          x.indicator[v].emplace_back(dim, w);
        continue;
      }
      if (out.width == 0)
        out = ctx_.program.layout().allocate(ctx_.tag(d_) + " " + name, labels_, mlp.role);
      std::vector<const Categorical*> inputs;
      std::vector<int> values;
      for (const Condition& c : alt) {
        inputs.push_back(c.input);
        values.push_back(c.value);
      }
      add_lookup_unit(mlp, inputs, values, {{out[v], 1.0f}});
    }
  if (out.width > 0)
    for (int v = 0; v < parts.size(); ++v) x.indicator[v].emplace_back(out[v], 1.0f);
  if (mlp.units > 0) ctx_.program.add(std::move(mlp), ctx_.tag(d_) + ": coordinate");
  return x;
}

// The level's coordinate now, and (previous_in_place) at t-1 for the level below, whose
// transitions read its parts directly: no fetch, no combining MLP on the way.
void CounterLevelBuilder::add_memory_and_coordinate() {
  const AtReset now = add_memory_head(0);
  AtReset before;
  if (plan_.previous_in_place) before = add_memory_head(1);
  Composite x = coordinate_parts(now, 0);
  if (plan_.coordinate_fused)
    ctx_.coordinate_parts[d_] = std::move(x);
  else
    ctx_.coordinate[d_] = combine(x, "coordinate", 0);
  if (!plan_.previous_in_place) return;
  Composite previous = coordinate_parts(before, 1);
  if (plan_.previous_explicit) ctx_.previous[d_] = combine(previous, "coordinate at t-1", 1);
  ctx_.previous_parts[d_] = std::move(previous);
}

}  // namespace krc
