#pragma once
// Distinct rows of integers of one fixed width, stored flat, numbered in insertion order, with
// an open-addressing hash index. One structure for every "set of fixed-width rows" of the
// decomposition: the coordinate tuples and upper prefixes of the action tables (rows of int),
// and the images of the skeleton (rows of bit words, set_family.hpp). Flat storage keeps
// millions of rows without a heap node per row.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace krc {

template <typename T>
class FlatRowIndex {
  static_assert(std::is_integral_v<T>, "rows of integers");

 public:
  explicit FlatRowIndex(std::size_t width = 0) : width_(width), slots_(16, 0) {}

  std::size_t width() const { return width_; }
  std::size_t size() const { return count_; }
  std::span<const T> row(std::size_t i) const { return {data_.data() + i * width_, width_}; }

  // Index of the row, or -1.
  std::int64_t find(std::span<const T> row) const {
    if (row.size() != width_) return -1;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t slot = hash(row) & mask;; slot = (slot + 1) & mask) {
      const std::uint32_t entry = slots_[slot];
      if (entry == 0) return -1;
      if (equals(entry - 1, row)) return entry - 1;
    }
  }

  // Index of the row, adding it when new; `added` tells which.
  std::size_t insert(std::span<const T> row, bool* added = nullptr) {
    if (row.size() != width_) throw std::invalid_argument("FlatRowIndex: row of the wrong width");
    if (2 * (count_ + 1) > slots_.size()) grow();
    const std::size_t mask = slots_.size() - 1;
    std::size_t slot = hash(row) & mask;
    for (;; slot = (slot + 1) & mask) {
      const std::uint32_t entry = slots_[slot];
      if (entry == 0) break;
      if (equals(entry - 1, row)) {
        if (added) *added = false;
        return entry - 1;
      }
    }
    if (count_ >= 0xfffffffeU) throw std::length_error("FlatRowIndex: too many rows");
    data_.insert(data_.end(), row.begin(), row.end());
    slots_[slot] = static_cast<std::uint32_t>(++count_);
    if (added) *added = true;
    return count_ - 1;
  }

 private:
  // FNV-1a over the values, with a final mix (rows of small ints and sparse bit words alike).
  static std::uint64_t hash(std::span<const T> row) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (T v : row) {
      h ^= static_cast<std::uint64_t>(v);
      h *= 0x100000001b3ULL;
      h ^= h >> 29;
    }
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
  }
  bool equals(std::size_t i, std::span<const T> row) const {
    return std::equal(row.begin(), row.end(),
                      data_.begin() + static_cast<std::ptrdiff_t>(i * width_));
  }
  void grow() {
    std::vector<std::uint32_t> old(slots_.size() * 2, 0);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const std::uint32_t entry : old) {
      if (entry == 0) continue;
      std::size_t slot = hash(row(entry - 1)) & mask;
      while (slots_[slot] != 0) slot = (slot + 1) & mask;
      slots_[slot] = entry;
    }
  }

  std::size_t width_, count_ = 0;
  std::vector<T> data_;
  std::vector<std::uint32_t> slots_;  // index + 1; 0 = empty
};

// The action tables' rows of coordinates.
using RowIndex = FlatRowIndex<int>;

}  // namespace krc
