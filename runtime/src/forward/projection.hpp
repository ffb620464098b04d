#pragma once
// One head's q, k and v, the first step of both attention kernels (attention_kernel.cpp sums in
// double, float32_attention.cpp in float). Internal to the runtime.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "forward/forward_kernels.hpp"
#include "forward/prepared_network.hpp"

namespace krc::kernels {

// q, k and v of rows [from, n), each a sum in `Sum` over the input dims the head reads, in
// ascending order, then stored as round(sum); rows < from of k and v stay as the previous word
// left them. `key` and `value` are scratch rows (all zero between rows). A value that rounds
// to zero is not kept.
template <typename Sum, typename Act, typename State, typename Round>
void project(const PreparedHead& head, const Activations<Act>& x, int from, int n, Round round,
             State& h, std::vector<Sum>& key, std::vector<Sum>& value) {
  using Rows = std::remove_cvref_t<decltype(h.kt)>;
  const int qd = head.query_dim, vd = head.value_dim, columns = (n + 15) / 16 * 16;
  h.q.resize(n, qd);
  if (h.kt.rows() != qd) {
    h.kt.setZero(qd, columns);
  } else if (h.kt.cols() < columns) {
    Rows grown = Rows::Zero(qd, columns);
    grown.leftCols(h.kt.cols()) = h.kt;
    h.kt.swap(grown);
  }
  h.v.start.resize(from + 1);
  h.v.index.resize(h.v.start[from]);
  h.v.value.resize(h.v.start[from]);
  key.assign(qd, Sum{0});
  value.assign(vd, Sum{0});
  auto scatter = [](const ScatterRows& w, int c, Sum xv, Sum* out) {
    for (int e = w.begin(c); e < w.end(c); ++e)
      out[w.column[e]] += xv * static_cast<Sum>(w.value[e]);
  };
  for (int i = from; i < n; ++i) {
    Sum *q = h.q.row(i).data(), *k = key.data(), *v = value.data();
    std::fill(q, q + qd, Sum{0});
    const Act* row = x.row(i).data();
    head.reads.for_each([&](int c) {
      const Sum xv = static_cast<Sum>(row[c]);
      if (xv == Sum{0}) return;
      scatter(head.query, c, xv, q);
      scatter(head.key, c, xv, k);
      scatter(head.value, c, xv, v);
    });
    for (int j = 0; j < qd; ++j) {
      q[j] = round(q[j]);
      h.kt(j, i) = round(k[j]);
      k[j] = Sum{0};
    }
    for (int j = 0; j < vd; ++j) {
      if (v[j] == Sum{0}) continue;
      const Sum stored_value = round(v[j]);
      v[j] = Sum{0};
      if (stored_value == Sum{0}) continue;  // underflowed in float32
      h.v.index.push_back(j);
      h.v.value.push_back(stored_value);
    }
    h.v.start.push_back(static_cast<int>(h.v.index.size()));
  }
}

}  // namespace krc::kernels
