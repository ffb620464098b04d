#pragma once
// The input features every construction draws on, allocated in the residual stream on first
// use and written by the token and position embeddings (designed, not learned):
//   token:<letter>          one-hot of the current letter (all zero at BOS)
//   bos                     1 at position 0 only
//   one                     1 everywhere (constant terms of queries)
//   position code:<bit>     +-1 binary code of t: keys of exact position lookups
//   position code(t-k):<bit> +-1 code of max(t-k, 0): queries that fetch from k positions back
//   position                t itself: keys of "latest marked position" heads
//   position phase:<b>      cos and sin of pi t / 2^b: keys of fetches from t - k for any k,
//                           whose queries are rotations of the same code (attention_heads.hpp)
//   log remaining           ln(max_len + 1 - t): the query that makes a head sum, not average
// and, for counters that sum in blocks of B positions (block of t: (t-1)/B for t >= 1,
// S = ceil(max_len / B) blocks):
//   block code:<bit>        +-1 bits of t's block (0 at BOS); block code(prev): of the block
//                           before t's (0 where there is none)
//   block start             1 at the first position of every block
//   log remaining in block  ln(B + 1 - k), k = t's place in its block (1..B)
//   log remaining blocks    ln(S - block of t): with the starts so far, S + 1 in all
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "ir/program.hpp"

namespace krc {

class Features {
 public:
  explicit Features(Program& program) : program_(program) {}

  Program& program() { return program_; }
  int max_len() const { return program_.max_len(); }
  float select_sharpness() const { return program_.select_sharpness(); }
  // Bits in a position code: enough for 0..max_len.
  int code_bits() const;

  const Subspace& tokens();
  const Subspace& bos();
  const Subspace& one();
  const Subspace& position_code();
  const Subspace& position_code_back(int k);
  const Subspace& position();
  // cos(pi t / 2^b) for b = 0..bits-1 and sin(pi t / 2^b) for b = 1..bits-1 (sin(pi t) = 0),
  // bits = code_bits(): dimension 2b - 1 is the cosine of frequency b, 2b its sine.
  const Subspace& position_phase();
  // cos and sin of pi t / 2^b, exactly 0 where they should be (at multiples of pi/2).
  static std::pair<double, double> phase(std::int64_t t, int b);
  const Subspace& log_remaining();
  int block_bits(int block) const;  // bits of a block code
  const Subspace& block_code(int block, bool previous);
  const Subspace& block_start(int block);
  const Subspace& log_remaining_in_block(int block);
  const Subspace& log_remaining_blocks(int block);

 private:
  void write_code(const Subspace& s, int shift);
  // The subspace called `name`, allocated and written by `make` on first use.
  const Subspace& cached(const std::string& name, const std::function<Subspace()>& make);
  Program& program_;
  std::map<std::string, Subspace> allocated_;
  std::map<int, Subspace> code_back_;
};

}  // namespace krc
