#pragma once
// The automaton half of `krc info AUT`: sizes, the state graph and the transformation
// semigroup, as JSON:
//   {"name", "states" (count), "letters" (count), "initial" (state name),
//    "reachable_states" (count), "all_reachable", "strongly_connected_components" (count),
//    "sink_components" (count),
//    "semigroup": {"size" (|S|, null when over the limit), "monoid_size" (|S u {1}|),
//                  "aperiodic", "group_of_units_order", "is_group", "element_limit"}}
// When the semigroup is larger than max_elements, the fields that can still be decided from
// the letters alone are filled (a letter with a cycle longer than 1 makes S not aperiodic;
// letters that are all permutations make S a group; a letter that is not makes S not a group)
// and the others are null.
#include <cstddef>
#include <nlohmann/json.hpp>

#include "krc/automata/automaton.hpp"
#include "krc/automata/transformation_semigroup.hpp"

namespace krc {

nlohmann::json analyze_automaton(const Automaton& automaton,
                                 std::size_t max_elements = kDefaultMaxSemigroupElements);

}  // namespace krc
