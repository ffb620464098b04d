#pragma once
// What preparing a network for the forward pass really holds, against the memory budget's model
// of it (network_memory.hpp: prepared_bytes), which refuses networks before they are read: the
// model must be an upper bound, or a budget is no bound.
#include <cstddef>

#include "krc/runtime/network.hpp"

namespace krc::test {

// The heap that constructing a ForwardPass (float64-accumulate, one thread) keeps, measured by
// glibc's allocator statistics; 0 under AddressSanitizer, whose allocator keeps its own.
std::size_t prepared_heap_bytes(const Network& network);

// CHECKs prepared_heap_bytes(network) <= prepared_bytes(shape_of(network)).
void check_prepared_within_model(const Network& network);

}  // namespace krc::test
