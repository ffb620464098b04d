#include "krc/set_family.hpp"

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
    : universe_(universe_size),
      words_(std::max<std::size_t>(1, (universe_size + 63) / 64)),
      slots_(64, 0) {}

std::uint64_t SetFamily::hash(std::span<const SetWord> s) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (SetWord w : s) {
    h ^= w + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  }
  return h;
}

std::int64_t SetFamily::find(std::span<const SetWord> s) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t slot = hash(s) & mask;; slot = (slot + 1) & mask) {
    std::uint32_t entry = slots_[slot];
    if (entry == 0) return -1;
    if (std::equal(s.begin(), s.end(),
                   bits_.begin() + static_cast<std::ptrdiff_t>((entry - 1) * words_)))
      return entry - 1;
  }
}

std::size_t SetFamily::insert(std::span<const SetWord> s, bool* added) {
  if (2 * (count_.size() + 1) > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t slot = hash(s) & mask;
  for (;; slot = (slot + 1) & mask) {
    std::uint32_t entry = slots_[slot];
    if (entry == 0) break;
    if (std::equal(s.begin(), s.end(),
                   bits_.begin() + static_cast<std::ptrdiff_t>((entry - 1) * words_))) {
      if (added) *added = false;
      return entry - 1;
    }
  }
  if (count_.size() >= 0xfffffffeU) throw std::length_error("SetFamily: too many sets");
  bits_.insert(bits_.end(), s.begin(), s.end());
  count_.push_back(static_cast<std::uint32_t>(set_bits::count(s)));
  slots_[slot] = static_cast<std::uint32_t>(count_.size());
  if (added) *added = true;
  return count_.size() - 1;
}

void SetFamily::grow() {
  std::vector<std::uint32_t> old(slots_.size() * 2, 0);
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (std::uint32_t entry : old) {
    if (entry == 0) continue;
    std::size_t slot = hash(set(entry - 1)) & mask;
    while (slots_[slot] != 0) slot = (slot + 1) & mask;
    slots_[slot] = entry;
  }
}

}  // namespace krc
