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
// add_semigroup_facts fills them.
#include <nlohmann/json.hpp>
#include <string>

#include "krc/decompose/holonomy.hpp"

namespace krc {

nlohmann::json decomposition_to_json(const HolonomyDecomposition& decomposition);

// The semigroup facts of the summary, computed the one way `krc decompose` and `krc info` both
// use, so that they never disagree: "size" = |S| when S has at most
// semigroup_enumeration_limit() elements, else null; "aperiodic" from that enumeration, else
// from the holonomy groups (all trivial exactly when S is aperiodic; "aperiodic_from":
// "holonomy groups"); "solvable" from the holonomy groups; "size_limit" the limit used.
inline constexpr std::size_t kDefaultReportElements = 100'000;
void add_semigroup_facts(nlohmann::json& summary, const HolonomyDecomposition& decomposition,
                         std::size_t max_elements = kDefaultReportElements);
// max_elements, lowered so that enumeration (about elements x letters x states steps) stays
// within 2·10^8 steps: a report the decomposition answers fast must not stall on it.
std::size_t semigroup_enumeration_limit(const Automaton& automaton, std::size_t max_elements);

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
inline constexpr std::size_t kDefaultDrawnSets = 20'000;
std::string decomposition_to_dot(const HolonomyDecomposition& decomposition,
                                 std::size_t max_sets = kDefaultDrawnSets);

}  // namespace krc
