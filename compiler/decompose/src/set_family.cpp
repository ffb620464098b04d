#include "krc/decompose/set_family.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace krc {

namespace set_bits {
bool is_subset(std::span<const SetWord> a, std::span<const SetWord> b) {
  for (std::size_t w = 0; w < a.size(); ++w)
    if (a[w] & ~b[w]) return false;
  return true;
}

std::size_t count(std::span<const SetWord> s) {
  std::size_t c = 0;
  for (SetWord w : s) c += static_cast<std::size_t>(std::popcount(w));
  return c;
}

std::vector<std::uint32_t> elements(std::span<const SetWord> s) {
  std::vector<std::uint32_t> out;
  for (std::size_t w = 0; w < s.size(); ++w)
    for (SetWord bits = s[w]; bits; bits &= bits - 1)
      out.push_back(
          static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
  return out;
}
}  // namespace set_bits

SetFamily::SetFamily(std::size_t universe_size)
    : universe_(universe_size), sets_(std::max<std::size_t>(1, (universe_size + 63) / 64)) {}

std::size_t SetFamily::insert(std::span<const SetWord> s, bool* added) {
  bool is_new = false;
  const std::size_t index = sets_.insert(s, &is_new);
  if (is_new) count_.push_back(static_cast<std::uint32_t>(set_bits::count(s)));
  if (added) *added = is_new;
  return index;
}

}  // namespace krc
