#pragma once
// Shared by the onelayer tests: compiling with the onelayer strategy at a given max_len, and
// the largest max_len its plan reports.
#include <vector>

#include "krc/backend/compile.hpp"

namespace krc::test::onelayer {

inline CompileResult compile_at(const Automaton& a, int max_len, OneLayerOptions limits = {}) {
  CompileOptions options;
  options.strategy = Strategy::OneLayer;
  options.max_len = max_len;
  options.onelayer = limits;
  return compile(a, options);
}

inline int largest_len(const Automaton& a, const OneLayerOptions& limits = {}) {
  return plan_onelayer(a, 1, limits).largest_len;
}

// Every word of exactly `length` letters over `letters` letters, in lexicographic order.
inline std::vector<std::vector<LetterId>> words_of_length(std::size_t letters, int length) {
  std::vector<std::vector<LetterId>> words{{}};
  for (int t = 0; t < length; ++t) {
    std::vector<std::vector<LetterId>> longer;
    for (const auto& w : words)
      for (LetterId l = 0; l < letters; ++l) {
        longer.push_back(w);
        longer.back().push_back(l);
      }
    words.swap(longer);
  }
  return words;
}

}  // namespace krc::test::onelayer
