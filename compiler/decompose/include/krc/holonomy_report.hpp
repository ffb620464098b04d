#pragma once
// The holonomy decomposition as other programs and people read it: a JSON summary (an
// interface: keep its shape), the text form (one line per level, like SgpDec), and the
// skeleton in Graphviz DOT.
//
// JSON: {"automaton": {"name", "states", "letters"},
//        "semigroup": {"size", "aperiodic", "solvable"},
//        "skeleton": {"images", "classes", "depth", "singleton_images", "tile_chains"},
//        "levels": [{"level": 1, "states": N, "dummy": bool, "components": [
//            {"representative": [state names], "tiles": k, "class": c,
//             "group": {"order", "name", "factors": [sorted orders], "solvable", "exact"}}]}],
//        "cascade": {"reachable_tuples"} (only when the action tables were built)}
// "states" of a level is the number of its coordinate values (tiles of all its slots, plus
// the dummy when some chain skips the level). "semigroup.size" and "aperiodic" are null here:
// the caller fills them from the transformation semigroup when it can enumerate it.
#include <nlohmann/json.hpp>
#include <string>

#include "krc/holonomy.hpp"

namespace krc {

nlohmann::json decomposition_to_json(const HolonomyDecomposition& decomposition);

// Text from the JSON summary (so that fields the caller filled in show up):
//   automaton NAME: N states, K letters
//   skeleton: I images in C subduction classes, depth D
//   1: (5,S5)
//   2: (4,S4) 3
//   levels: L, solvable: yes, ...
// A component prints as (tiles,group) or, for a trivial group, as its tile count (SgpDec).
std::string decomposition_text(const nlohmann::json& summary);
std::string decomposition_to_text(const HolonomyDecomposition& decomposition);

// The skeleton for Graphviz: sets of E as nodes, clustered by depth and subduction class
// (representatives drawn bold), with an edge from each image to each of its tiles.
// Throws krc::LimitError for skeletons too large to draw (more than max_sets sets).
std::string decomposition_to_dot(const HolonomyDecomposition& decomposition,
                                 std::size_t max_sets = 20'000);

}  // namespace krc
