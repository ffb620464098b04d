#pragma once
// Packs a Program's operations into transformer layers. Sublayer 2L is layer L's attention,
// 2L+1 its MLP. Each operation goes to the earliest sublayer of its kind allowed by its data
// dependencies on the operations before it in program order:
//   read after write   -> strictly later (the writer's output must be in the stream);
//   write after read   -> same sublayer or later (all ops of a sublayer read the same x);
//   write after write  -> strictly later (in-place updates stay in order).
// This is optimal depth for the given operations, and lets independent parts of a
// construction (e.g. counters of different slots) share layers.
#include <vector>

#include "ir/program.hpp"

namespace krc {

struct Schedule {
  std::vector<int> sublayer;  // per op
  int layers = 0;
};

Schedule schedule(const Program& program);

}  // namespace krc
