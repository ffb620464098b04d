#include "krc/runtime/network_memory.hpp"

#include <algorithm>

#include "krc/automata/memory_budget.hpp"
#include "krc/automata/thousands.hpp"

namespace krc {

namespace {

using u64 = std::uint64_t;

u64 cast(std::int64_t n) { return n < 0 ? 0 : static_cast<u64>(n); }
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }
u64 mul(u64 a, u64 b, u64 c) { return saturating_mul(saturating_mul(a, b), c); }

// Accumulates a saturating sum.
struct Total {
  u64 bytes = 0;
  Total& operator+=(u64 more) {
    bytes = saturating_add(bytes, more);
    return *this;
  }
};

// An Eigen row-major sparse matrix: outer index of rows + 1 ints, float values and int indices.
u64 sparse_matrix(std::int64_t rows, u64 nonzeros) {
  return saturating_add(mul(cast(rows) + 1, 4), mul(nonzeros, 8));
}
// ScatterRows: rows + 1 offsets, an int column and a float value per entry.
u64 scatter_rows(std::int64_t rows, u64 nonzeros) {
  return saturating_add(mul(cast(rows) + 1, 4), mul(nonzeros, 8));
}
std::int64_t round_up_to_16(std::int64_t n) { return (n + 15) / 16 * 16; }

}  // namespace

NetworkShape shape_of(const Network& n) {
  NetworkShape s;
  s.d_model = n.d_model();
  s.max_len = n.max_len;
  s.vocabulary = static_cast<std::int64_t>(n.vocabulary.size());
  s.states = static_cast<std::int64_t>(n.states.size());
  s.unembed_nonzeros = static_cast<u64>(n.unembedding.nonZeros());
  for (const auto& layer : n.layers) {
    LayerSize l;
    for (const auto& h : layer.heads) {
      l.heads.push_back({h.query.cols(), h.value.cols()});
      l.head_nonzeros += static_cast<u64>(h.query.nonZeros() + h.key.nonZeros() +
                                          h.value.nonZeros() + h.output.nonZeros());
    }
    if (layer.mlp) {
      l.mlp_hidden = layer.mlp->hidden();
      l.mlp_in_nonzeros = static_cast<u64>(layer.mlp->in_weight.nonZeros());
      l.mlp_out_nonzeros = static_cast<u64>(layer.mlp->out_weight.nonZeros());
    }
    s.layers.push_back(std::move(l));
  }
  return s;
}

u64 network_bytes(const NetworkShape& s) {
  Total t;
  const u64 d = cast(s.d_model);
  t += mul(cast(s.vocabulary), d, 4);
  t += mul(cast(s.max_len) + 1, d, 4);
  t += sparse_matrix(s.d_model, s.unembed_nonzeros);
  for (const auto& l : s.layers) {
    for (const auto& h : l.heads) {
      t += mul(3, sparse_matrix(s.d_model, 0));  // q, k, v: [d_model, query/value dim]
      t += sparse_matrix(h.value_dim, 0);        // o: [value dim, d_model]
    }
    t += mul(l.head_nonzeros, 8);
    if (l.mlp_hidden) {
      t += sparse_matrix(*l.mlp_hidden, l.mlp_in_nonzeros);
      t += sparse_matrix(s.d_model, l.mlp_out_nonzeros);
      t += mul(cast(*l.mlp_hidden) + d, 4);  // the biases
    }
  }
  return t.bytes;
}

u64 prepared_bytes(const NetworkShape& s) {
  Total t;
  u64 grouping = 0;  // the largest layer's transient grouping
  const u64 d = cast(s.d_model);
  t += scatter_rows(s.d_model, s.unembed_nonzeros);
  for (const auto& l : s.layers) {
    for (const auto& h : l.heads) {
      t += mul(3, scatter_rows(s.d_model, 0));
      t += scatter_rows(h.value_dim, 0);
      t += mul(d, 10);  // which dims a head reads, and their runs
    }
    t += mul(l.head_nonzeros, 12);
    t += mul(d, 9);  // the dims the heads write
    if (!l.mlp_hidden) continue;
    const u64 hidden = cast(*l.mlp_hidden);
    t += scatter_rows(*l.mlp_hidden, l.mlp_in_nonzeros);      // in_by_unit
    t += scatter_rows(*l.mlp_hidden, l.mlp_out_nonzeros);     // out_by_unit
    t += mul(2, scatter_rows(s.d_model, l.mlp_in_nonzeros));  // by input, low thresholds
    // Biases, largest weights, thresholds, positive-bias units (push_back: twice), marks.
    t += mul(hidden, 8 + 2 * 8 + 2 * 16 + 2 * 4 + 2);
    t += mul(d, 8 + 2 * 16);
    // Shared-input groups: ramps per output, kept; and a direction per unit while grouping,
    // which one layer holds at a time (shared_input_groups frees it before the next layer):
    // counted once, for the layer that needs most. Counted in every layer, it made a
    // 1,000-state model's read-back 9 GB larger than anything preparing it holds at once.
    t += mul(l.mlp_out_nonzeros, 2 * 3 * 8 + 32);
    grouping = std::max(grouping, saturating_add(mul(hidden, 128), mul(l.mlp_in_nonzeros, 32)));
  }
  t += grouping;
  return t.bytes;
}

u64 word_buffer_bytes(const NetworkShape& s, std::int64_t letters) {
  Total t;
  const u64 rows = cast(letters) + 1, keys = cast(round_up_to_16(letters + 1));
  const u64 d = cast(s.d_model);
  t += mul(rows, d, 8);                // x (doubles in float64 mode)
  t += mul(rows, cast(s.states), 16);  // logits, and the copy returned
  t += mul(rows, 8);                   // the word kept for prefix reuse
  u64 widest_hidden = 0, widest_head = 0;
  for (const auto& l : s.layers) {
    for (const auto& h : l.heads) {
      const u64 qd = cast(h.query_dim), vd = cast(h.value_dim);
      t += mul(rows, qd, 8);                         // q
      t += mul(qd, keys, 8);                         // keys transposed
      t += mul(rows, std::min<u64>(vd, d), 2 * 12);  // sparse value rows (grown)
      // Key groups: per row its group; per group (a row takes the grouped path only when
      // the word has 16 rows per group) its value sum.
      t += saturating_add(mul(rows, 2 * 4 + 2 * 4), mul(std::min<u64>(64, rows / 16), vd * 8 + 32));
      widest_head = std::max(widest_head, std::max(qd, vd));
    }
    if (l.mlp_hidden) widest_hidden = std::max(widest_hidden, cast(*l.mlp_hidden));
  }
  t += mul(64, keys, 8);                   // a block's scores
  t += mul(64, d, 8);                      // a block's rows
  t += mul(rows, 8 + 8 + 4);               // softmax terms and kept keys
  t += mul(widest_head, 5 * 8);            // per-head accumulators
  t += mul(widest_hidden, 8 + 1 + 2 * 4);  // MLP accumulators, marks, touched units
  t += mul(d, 8 + 2 * 4);
  return t.bytes;
}

void check_prepare_memory(const Network& network) {
  const NetworkShape shape = shape_of(network);
  check_memory("preparing the network for the forward pass",
               saturating_add(network_bytes(shape), prepared_bytes(shape)));
}

void check_forward_memory(const Network& network, std::size_t words, std::size_t threads,
                          std::int64_t longest, std::uint64_t rows,
                          std::optional<std::uint64_t> prepared) {
  const NetworkShape shape = shape_of(network);
  u64 total = saturating_add(network_bytes(shape), prepared.value_or(prepared_bytes(shape)));
  total = saturating_add(total, mul(threads, word_buffer_bytes(shape, longest)));
  total = saturating_add(total, mul(rows, cast(shape.states) * 8 + 8));  // logits and words
  check_memory("running " + with_thousands(static_cast<long long>(words)) +
                   (words == 1 ? " word" : " words") + " of up to " + with_thousands(longest) +
                   (longest == 1 ? " letter" : " letters") + " on " + std::to_string(threads) +
                   (threads == 1 ? " thread" : " threads"),
               total);
}

}  // namespace krc
