#pragma once
// What preparing a network for the forward pass really holds, against the memory budget's model
// of it (network_memory.hpp: prepared_bytes), which refuses networks before they are read: the
// model must be an upper bound, or a budget is no bound.
#include <cstddef>
#include <cstdint>

#include "krc/runtime/network.hpp"

namespace krc::test {

// The heap that constructing a ForwardPass (float64-accumulate, one thread) keeps, measured by
// glibc's allocator statistics (0 under AddressSanitizer, whose allocator keeps its own), and
// what the pass counts its prepared copies at (ForwardPass::prepared_bytes()).
struct PreparedMemory {
  std::size_t heap = 0;
  std::uint64_t counted = 0;
};
PreparedMemory prepared_memory(const Network& network);
std::size_t prepared_heap_bytes(const Network& network);  // prepared_memory's heap

// CHECKs that the heap and the count are within prepared_bytes(shape_of(network)), and that the
// heap is within the count (1% and 64 KiB to spare).
void check_prepared_within_model(const Network& network);

}  // namespace krc::test
