#include "krc/row_index.hpp"

#include <algorithm>
#include <stdexcept>

namespace krc {

std::uint64_t RowIndex::hash(std::span<const int> row) const {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (int v : row) {
    h ^= static_cast<std::uint32_t>(v);
    h *= 0x100000001b3ULL;
    h ^= h >> 29;
  }
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 32);
}

bool RowIndex::equals(std::size_t i, std::span<const int> row) const {
  return std::equal(row.begin(), row.end(),
                    data_.begin() + static_cast<std::ptrdiff_t>(i * width_));
}

std::int64_t RowIndex::find(std::span<const int> row) const {
  if (row.size() != width_) return -1;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t slot = hash(row) & mask;; slot = (slot + 1) & mask) {
    std::uint32_t entry = slots_[slot];
    if (entry == 0) return -1;
    if (equals(entry - 1, row)) return entry - 1;
  }
}

std::size_t RowIndex::insert(std::span<const int> row, bool* added) {
  if (row.size() != width_) throw std::invalid_argument("RowIndex: row of the wrong width");
  if (2 * (count_ + 1) > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t slot = hash(row) & mask;
  for (;; slot = (slot + 1) & mask) {
    std::uint32_t entry = slots_[slot];
    if (entry == 0) break;
    if (equals(entry - 1, row)) {
      if (added) *added = false;
      return entry - 1;
    }
  }
  if (count_ >= 0xfffffffeU) throw std::length_error("RowIndex: too many rows");
  data_.insert(data_.end(), row.begin(), row.end());
  slots_[slot] = static_cast<std::uint32_t>(++count_);
  if (added) *added = true;
  return count_ - 1;
}

void RowIndex::grow() {
  std::vector<std::uint32_t> old(slots_.size() * 2, 0);
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (std::uint32_t entry : old) {
    if (entry == 0) continue;
    std::size_t slot = hash(row(entry - 1)) & mask;
    while (slots_[slot] != 0) slot = (slot + 1) & mask;
    slots_[slot] = entry;
  }
}

}  // namespace krc
