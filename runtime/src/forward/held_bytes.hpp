#pragma once
// What a prepared structure holds on the heap: each vector's capacity, plus 16 bytes for the
// allocator's header of each block it owns. The verifier checks the memory budget with the
// prepared copies' real size once they exist (network_memory.hpp's model bounds them before).
#include <cstdint>
#include <vector>

namespace krc {

template <typename T>
std::uint64_t held_bytes(const std::vector<T>& v) {
  return v.capacity() == 0 ? 0 : v.capacity() * sizeof(T) + 16;
}

}  // namespace krc
