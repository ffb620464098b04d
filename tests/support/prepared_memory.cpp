#include "prepared_memory.hpp"

#include <doctest/doctest.h>
#include <malloc.h>

#include "forward/prepared_network.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/network_memory.hpp"

namespace krc::test {

namespace {
std::size_t heap_in_use() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;  // small blocks in use, and mmapped large ones
}
}  // namespace

PreparedMemory prepared_memory(const Network& network) {
  const std::size_t before = heap_in_use();
  const ForwardPass pass(network, {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 1});
  const std::size_t after = heap_in_use();
  return {after > before ? after - before : 0, pass.prepared().bytes()};
}

std::size_t prepared_heap_bytes(const Network& network) { return prepared_memory(network).heap; }

void check_prepared_within_model(const Network& network) {
  const PreparedMemory held = prepared_memory(network);
  const std::uint64_t model = prepared_bytes(shape_of(network));
  CAPTURE(held.heap);
  CAPTURE(held.counted);
  CAPTURE(model);
  CHECK(held.heap <= model);
  // The count the verifier uses once the copies exist misses nothing it would have to bound:
  // what glibc holds is within it, up to the ForwardPass object and page rounding of large
  // blocks (1% and 64 KiB).
  if (held.heap > 0) CHECK(held.heap <= held.counted + held.counted / 100 + 65536);
}

}  // namespace krc::test
