#include "prepared_memory.hpp"

#include <doctest/doctest.h>
#include <malloc.h>

#include "krc/runtime/forward.hpp"
#include "krc/runtime/network_memory.hpp"

namespace krc::test {

namespace {
std::size_t heap_in_use() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;  // small blocks in use, and mmapped large ones
}
}  // namespace

std::size_t prepared_heap_bytes(const Network& network) {
  const std::size_t before = heap_in_use();
  const ForwardPass pass(network, {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 1});
  const std::size_t after = heap_in_use();
  return after > before ? after - before : 0;
}

void check_prepared_within_model(const Network& network) {
  const std::size_t held = prepared_heap_bytes(network);
  const std::uint64_t model = prepared_bytes(shape_of(network));
  CAPTURE(held);
  CAPTURE(model);
  CHECK(held <= model);
}

}  // namespace krc::test
