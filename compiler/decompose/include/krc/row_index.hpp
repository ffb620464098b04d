#pragma once
// Distinct rows of ints of one fixed width, stored flat, numbered in insertion order, with an
// open-addressing hash index: the coordinate tuples and upper prefixes of the action tables.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace krc {

class RowIndex {
 public:
  explicit RowIndex(std::size_t width = 0) : width_(width), slots_(16, 0) {}

  std::size_t width() const { return width_; }
  std::size_t size() const { return count_; }
  std::span<const int> row(std::size_t i) const { return {data_.data() + i * width_, width_}; }
  // Index of the row, or -1.
  std::int64_t find(std::span<const int> row) const;
  // Index of the row, adding it when new; `added` tells which.
  std::size_t insert(std::span<const int> row, bool* added = nullptr);

 private:
  std::uint64_t hash(std::span<const int> row) const;
  bool equals(std::size_t i, std::span<const int> row) const;
  void grow();

  std::size_t width_, count_ = 0;
  std::vector<int> data_;
  std::vector<std::uint32_t> slots_;  // index + 1; 0 = empty
};

}  // namespace krc
