#include "ir/schedule.hpp"

#include <algorithm>

namespace krc {

namespace {
bool intersects(const std::vector<int>& a, const std::vector<int>& b) {
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i == *j) return true;
    if (*i < *j)
      ++i;
    else
      ++j;
  }
  return false;
}
}  // namespace

Schedule schedule(const Program& program) {
  const auto& ops = program.ops();
  Schedule result;
  result.sublayer.resize(ops.size());
  int last = -1;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    int earliest = 0;
    for (std::size_t j = 0; j < i; ++j) {
      int sj = result.sublayer[j];
      if (intersects(ops[j].writes, ops[i].reads) || intersects(ops[j].writes, ops[i].writes))
        earliest = std::max(earliest, sj + 1);
      else if (intersects(ops[j].reads, ops[i].writes))
        earliest = std::max(earliest, sj);
    }
    int parity = ops[i].is_head() ? 0 : 1;
    if (earliest % 2 != parity) ++earliest;
    result.sublayer[i] = earliest;
    last = std::max(last, earliest);
  }
  result.layers = last < 0 ? 0 : last / 2 + 1;
  return result;
}

}  // namespace krc
