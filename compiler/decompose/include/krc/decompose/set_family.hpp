#pragma once
// A growing family of distinct subsets of {0..n-1}, stored flat as bit words (one row of
// ceil(n/64) words per set) in a FlatRowIndex (row_index.hpp). The holonomy skeleton keeps
// every image of the state set here: millions of sets fit without a heap node per set.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "krc/decompose/row_index.hpp"

namespace krc {

using SetWord = std::uint64_t;

// Small helpers on sets given as spans of words (all of the same length).
namespace set_bits {
inline bool test(std::span<const SetWord> s, std::size_t q) { return (s[q / 64] >> (q % 64)) & 1U; }
inline void set(std::span<SetWord> s, std::size_t q) { s[q / 64] |= SetWord{1} << (q % 64); }
bool is_subset(std::span<const SetWord> a, std::span<const SetWord> b);  // a ⊆ b
std::size_t count(std::span<const SetWord> s);
std::vector<std::uint32_t> elements(std::span<const SetWord> s);  // ascending
}  // namespace set_bits

class SetFamily {
 public:
  explicit SetFamily(std::size_t universe_size);

  std::size_t universe_size() const { return universe_; }
  std::size_t words_per_set() const { return sets_.width(); }
  std::size_t size() const { return sets_.size(); }

  std::span<const SetWord> set(std::size_t i) const { return sets_.row(i); }
  std::size_t cardinality(std::size_t i) const { return count_[i]; }

  // Index of the set, or -1.
  std::int64_t find(std::span<const SetWord> s) const { return sets_.find(s); }
  // Index of the set, adding it when new; `added` tells which.
  std::size_t insert(std::span<const SetWord> s, bool* added = nullptr);

 private:
  std::size_t universe_;
  FlatRowIndex<SetWord> sets_;
  std::vector<std::uint32_t> count_;  // the cardinality of each set
};

}  // namespace krc
