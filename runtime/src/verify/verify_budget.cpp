// How long the forward pass takes on a word, estimated from the network's sizes, so that the
// default verification of a large network stays within its time budget (verifier.hpp).
//
// Legend: N = word length, t = a row (0..N), qd/vd = a head's query/value width, nnz = the
// nonzero weights of a matrix.
//
// The model counts the work of row t in units of about one multiply-add (kUnitSeconds each):
// - the embedding, the unembedding and the check of the row: d_model, the unembedding's
//   nonzeros and the states, twice;
// - the weights whose input may be nonzero: a share of the nonzeros of the heads' projections
//   and of the MLP units evaluated one by one (a compiled residual row is mostly zero: one-hot
//   blocks). A counter's comb costs O(log units) per output in float64 sums, but in Float32 its
//   active units (about half) are evaluated one by one, and the candidates are ordered;
// - a select head scores every causal key below key_tree_from_row (t keys of qd products, in a
//   vectorised kernel: a fraction of a unit each) and about 5 log2(N)^2 keys and bounds beyond
//   it through the key tree (position codes keep the keys within Hamming distance 2). Float64
//   keeps every term down to e^-746, so the tree prunes nothing there: every key is scored;
// - an average head over a counter's keys costs a few groups; in Float32 a value column with
//   several values is summed over all t keys;
// - in Float32, an MLP of integer clamp pairs (the integer scan's compose steps) costs its
//   row_work() per row (integer_clamp_mlp.hpp) instead of a share of its nonzeros.
// The constants were fitted to `krc bench forward --file` (whose last column prints this
// estimate) on the project machine: zoo networks of both strategies at max-len 256 to 16384 and
// the 55-state TCP model, and rounded so that the estimate errs towards more time, which only
// means fewer words in the default run, never a longer run.
#include <algorithm>
#include <cmath>
#include <set>

#include "forward/prepared_network.hpp"
#include "krc/runtime/verifier.hpp"

namespace krc {

namespace {

constexpr double kUnitSeconds = 1.0e-9;
constexpr double kActiveShare = 0.1;    // of the nonzero weights evaluated one by one, per row
constexpr double kFloat32Share = 2.5;   // Float32 evaluates each candidate unit from its inputs
constexpr double kShortRowShare = 0.3;  // the same for the rows of short (exhaustive) words
constexpr double kDenseKey = 0.3;       // one key's qd products in the dense scores kernel / qd
constexpr double kTreeKeys = 1.5;       // keys and bounds per row through the tree / log2(N)^2
constexpr double kWordOverhead = 5e4;   // per word: buffers, the automaton's run, the check
constexpr double kCombSearch = 5.0;     // a comb output's binary search, per step (float64 sums)
constexpr double kCombUnit = 6.0;       // a comb unit evaluated in Float32: inputs, output, order
constexpr double kCombActive = 0.25;    // the share of a comb's units active on average
constexpr double kClampWork = 4.0;      // an integer clamp-pair MLP's row_work(), per unit

struct LayerCost {
  double nonzeros = 0;        // weights evaluated one by one
  double select_width = 0;    // sum of qd over select heads
  double average_width = 0;   // sum of vd over average heads
  double comb_units = 0;      // MLP units read through one linear form
  double comb_search = 0;     // sum over their outputs of log2(units): the float64-sum cost
  double clamp_nonzeros = 0;  // an integer clamp-pair MLP's share of `nonzeros`...
  double clamp_work = 0;      // ...and what a row of it costs in Float32 instead
};

std::vector<LayerCost> layer_costs(const PreparedNetwork& network) {
  std::vector<LayerCost> costs;
  for (const PreparedLayer& layer : network.layers) {
    LayerCost c;
    for (const PreparedHead& h : layer.heads) {
      c.nonzeros += static_cast<double>(h.query.column.size() + h.key.column.size() +
                                        h.value.column.size() + h.output.column.size());
      (h.kind == HeadKind::Select ? c.select_width : c.average_width) +=
          h.kind == HeadKind::Select ? h.query_dim : h.value_dim;
    }
    if (layer.mlp) {
      const PreparedMlp& mlp = *layer.mlp;
      double comb_outputs = 0;
      for (const SharedInputUnits& group : mlp.shared_input) {
        const double units = static_cast<double>(group.units().size());
        c.comb_units += units;
        std::set<int> dims;  // the comb's outputs: one search each, rising and falling units
        for (int u : group.units())
          for (int e = mlp.out_by_unit.begin(u); e < mlp.out_by_unit.end(u); ++e) {
            dims.insert(mlp.out_by_unit.column[e]);
            ++comb_outputs;
          }
        c.comb_search += 2.0 * static_cast<double>(dims.size()) * std::log2(units + 2.0);
      }
      const double mlp_nonzeros =
          static_cast<double>(mlp.in_by_input.column.size() + mlp.out_by_unit.column.size()) -
          comb_outputs;
      c.nonzeros += mlp_nonzeros;
      if (mlp.integer_clamps) {
        c.clamp_nonzeros = mlp_nonzeros;
        c.clamp_work = kClampWork * mlp.integer_clamps->row_work();
      }
    }
    costs.push_back(c);
  }
  return costs;
}

double row_units(const PreparedNetwork& network, std::size_t states) {
  return 2.0 * (network.d_model + static_cast<double>(network.unembedding.column.size()) +
                static_cast<double>(states));
}

}  // namespace

double estimated_cpu_seconds_per_word(const ForwardPass& pass, int length) {
  const PreparedNetwork& network = pass.prepared();
  const ForwardOptions& options = pass.options();
  const double rows = length + 1.0;
  const double log_n = std::log2(std::max(2.0, rows));
  const bool float32 = options.arithmetic == Arithmetic::Float32;
  // Keys a select head scores, summed over the rows of the word.
  const double dense_rows = options.arithmetic == Arithmetic::Float64
                                ? rows
                                : std::min(rows, static_cast<double>(options.key_tree_from_row));
  const double select_keys = kDenseKey * dense_rows * dense_rows / 2.0 +
                             (rows - dense_rows) * std::min(rows, kTreeKeys * log_n * log_n);
  double units = rows * row_units(network, pass.network().states.size()) + kWordOverhead;
  for (const LayerCost& c : layer_costs(network)) {
    const double nonzeros = float32 ? c.nonzeros - c.clamp_nonzeros : c.nonzeros;
    units += rows * kActiveShare * (float32 ? kFloat32Share : 1.0) * nonzeros +
             c.select_width * select_keys + (float32 ? rows * c.clamp_work : 0.0);
    units += float32 ? c.average_width * rows * rows / 2.0 +
                           rows * c.comb_units * kCombActive * kCombUnit
                     : rows * (16.0 * c.average_width + kCombSearch * c.comb_search);
  }
  return kUnitSeconds * units;
}

double estimated_cpu_seconds_per_row(const ForwardPass& pass) {
  // One new row of a short word: the share of the weights, short rows, and the word's overhead
  // spread over the rows it reuses.
  const PreparedNetwork& network = pass.prepared();
  double units = row_units(network, pass.network().states.size()) + kWordOverhead / 4.0;
  const bool float32 = pass.options().arithmetic == Arithmetic::Float32;
  for (const LayerCost& c : layer_costs(network)) {
    const double nonzeros = float32 ? c.nonzeros - c.clamp_nonzeros : c.nonzeros;
    units += kShortRowShare * (float32 ? kFloat32Share : 1.0) * nonzeros +
             16.0 * (c.select_width + c.average_width) + (float32 ? c.clamp_work : 0.0);
    units += float32 ? c.comb_units * kCombActive * kCombUnit : kCombSearch * c.comb_search;
  }
  return kUnitSeconds * units;
}

}  // namespace krc
