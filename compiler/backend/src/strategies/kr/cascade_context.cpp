#include "strategies/kr/cascade_context.hpp"

namespace krc {

namespace {

std::string join_states(const Automaton& a, const std::vector<StateId>& states) {
  std::string s = "{";
  for (std::size_t i = 0; i < states.size(); ++i) s += (i ? "," : "") + a.state_name(states[i]);
  return s + "}";
}

}  // namespace

CascadeContext::CascadeContext(const HolonomyDecomposition& decomposition, int max_len)
    : dec(decomposition),
      automaton(decomposition.automaton()),
      program(vocabulary_of(automaton), automaton.states(), max_len),
      features(program),
      initial(decomposition.encode(automaton.initial())) {
  tokens = Categorical::one_hot(features.tokens(), automaton.letters());
}

std::vector<std::string> level_value_labels(const HolonomyDecomposition& dec, int d) {
  const Level& level = dec.level(d);
  std::vector<std::string> labels;
  for (int v = 0; v < level.width; ++v) {
    if (v == level.dummy) {
      labels.push_back("-");
    } else {
      const Slot& slot = level.slots[level.slot_of[v]];
      labels.push_back(join_states(dec.automaton(), slot.tiles[level.tile_of[v]]));
    }
  }
  return labels;
}

Categorical CascadeContext::constant_coordinate(int d) {
  Categorical x;
  x.labels = value_labels(d);
  x.indicator.resize(dec.level(d).width);
  x.indicator[initial[d]].emplace_back(features.one()[0], 1.0f);
  return x;
}

namespace {

// The inputs of level d's transitions lookup: the letter, then levels 0..d-1 at t-1.
std::vector<Composite> transition_inputs(const CascadeContext& ctx, int d) {
  std::vector<Composite> inputs{Composite::of(ctx.tokens)};
  for (int j = 0; j < d; ++j)
    inputs.push_back(j + 1 == d && ctx.previous_parts[j] ? *ctx.previous_parts[j]
                                                         : Composite::of(ctx.previous[j]));
  return inputs;
}

}  // namespace

long long CascadeContext::transition_units(int d,
                                           const std::function<bool(const LevelAction&)>& writes) {
  if (d == 0) return 0;
  const auto inputs = transition_inputs(*this, d);
  std::vector<const Composite*> pointers;
  for (const auto& c : inputs) pointers.push_back(&c);
  const auto& table = dec.table(d);
  long long units = 0;
  for (std::size_t u = 0; u < table.upper.size(); ++u)
    for (LetterId a = 0; a < automaton.letter_count(); ++a) {
      if (!writes(table.action[u][a])) continue;
      std::vector<int> values{static_cast<int>(a)};
      values.insert(values.end(), table.upper[u].begin(), table.upper[u].end());
      units += composite_lookup_units(pointers, values);
    }
  return units;
}

void CascadeContext::add_transitions(int d, const ActionTerms& outputs, const Terms& at_bos) {
  for (auto [dim, w] : at_bos) program.embed_token(0, dim, w);
  const auto& table = dec.table(d);
  const auto letters = static_cast<LetterId>(automaton.letter_count());
  if (d == 0) {
    for (LetterId a = 0; a < letters; ++a)
      for (auto [dim, w] : outputs(table.action.at(0).at(a))) program.embed_token(a + 1, dim, w);
    return;
  }
  MlpOp lookup;
  lookup.name = tag(d) + ": action of (letter, upper coordinates at t-1)";
  lookup.role = role(RoleKind::Transition, d);
  const auto inputs = transition_inputs(*this, d);
  std::vector<const Composite*> pointers;
  for (const auto& c : inputs) pointers.push_back(&c);
  for (std::size_t u = 0; u < table.upper.size(); ++u)
    for (LetterId a = 0; a < letters; ++a) {
      Terms out = outputs(table.action[u][a]);
      if (out.empty()) continue;
      std::vector<int> values{static_cast<int>(a)};
      values.insert(values.end(), table.upper[u].begin(), table.upper[u].end());
      add_composite_lookup(lookup, pointers, values, out);
    }
  if (lookup.units > 0) program.add(std::move(lookup), tag(d) + ": transitions");
}

}  // namespace krc
