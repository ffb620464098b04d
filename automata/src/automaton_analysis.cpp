#include "krc/automata/automaton_analysis.hpp"

#include "krc/automata/input_error.hpp"
#include "krc/automata/state_graph.hpp"

namespace krc {

namespace {

bool letter_is_permutation(const Automaton& automaton, LetterId a) {
  std::vector<bool> hit(automaton.state_count(), false);
  for (StateId target : automaton.letter_action(a)) {
    if (hit[target]) return false;
    hit[target] = true;
  }
  return true;
}

// Some state lies on a cycle of length > 1 of the letter's functional graph: then the letter
// generates a nontrivial cyclic group.
bool letter_has_long_cycle(const Automaton& automaton, LetterId a) {
  const auto& f = automaton.letter_action(a);
  const std::size_t n = f.size();
  for (StateId q = 0; q < n; ++q) {
    if (f[q] == q) continue;
    StateId x = f[q];  // q is on a cycle iff iterating returns to it within n steps
    for (std::size_t step = 0; step < n && x != q; ++step) x = f[x];
    if (x == q) return true;
  }
  return false;
}

nlohmann::json semigroup_summary(const Automaton& automaton, std::size_t max_elements) {
  nlohmann::json s;
  s["element_limit"] = max_elements;
  try {
    auto monoid = TransformationSemigroup::generate(automaton, true, max_elements);
    s["size"] = monoid.semigroup_size();
    s["monoid_size"] = monoid.monoid_size();
    s["aperiodic"] = monoid.is_aperiodic();
    s["group_of_units_order"] = monoid.group_of_units_order();
    s["is_group"] = monoid.is_group();
  } catch (const LimitError&) {
    s["size"] = nullptr;
    s["monoid_size"] = nullptr;
    s["group_of_units_order"] = nullptr;
    bool all_permutations = true, long_cycle = false;
    for (LetterId a = 0; a < automaton.letter_count(); ++a) {
      all_permutations = all_permutations && letter_is_permutation(automaton, a);
      long_cycle = long_cycle || letter_has_long_cycle(automaton, a);
    }
    s["aperiodic"] = long_cycle ? nlohmann::json(false) : nlohmann::json(nullptr);
    s["is_group"] = all_permutations;
  }
  return s;
}

}  // namespace

nlohmann::json analyze_automaton(const Automaton& automaton, std::size_t max_elements) {
  auto graph = analyze_state_graph(automaton);
  nlohmann::json info;
  info["name"] = automaton.name();
  info["states"] = automaton.state_count();
  info["letters"] = automaton.letter_count();
  info["initial"] = automaton.state_name(automaton.initial());
  info["reachable_states"] = graph.reachable_count;
  info["all_reachable"] = graph.all_reachable;
  info["strongly_connected_components"] = graph.components.size();
  info["sink_components"] = graph.sink_components.size();
  info["semigroup"] = semigroup_summary(automaton, max_elements);
  return info;
}

}  // namespace krc
