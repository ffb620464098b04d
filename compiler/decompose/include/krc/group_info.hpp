#pragma once
// What the holonomy decomposition reports about a (holonomy) permutation group: its order,
// the orders of its composition factors, solvability and a readable name matching GAP's
// StructureDescription for the common groups.
#include <cstdint>
#include <string>
#include <vector>

#include "krc/perm_group.hpp"

namespace krc {

struct GroupInfo {
  std::uint64_t order = 1;
  std::string name = "1";               // "1", "C4", "C2 x C2", "S3", "D8", "Q8", "A5", "S5", ...
  std::vector<std::uint64_t> factors;   // composition factor orders, sorted
  bool solvable = true;
  // False only when a perfect group too large to enumerate was split by random sampling.
  bool exact = true;
};

struct GroupAnalysisOptions {
  std::uint64_t max_enumerated_order = 100'000;  // enumerate elements up to this order
  std::uint64_t seed = 0x5eed;                    // for the sampling fallback
};

GroupInfo analyze_group(const PermGroup& group, const GroupAnalysisOptions& options = {});

// Orders of the elements of S_n (or A_n when `alternating`): order -> how many elements.
std::vector<std::pair<std::uint64_t, std::uint64_t>> symmetric_order_statistics(int n,
                                                                                bool alternating);

}  // namespace krc
