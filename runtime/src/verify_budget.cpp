// How long the forward pass takes on a word, estimated from the network's sizes, so that the
// default verification of a large network stays within its time budget (verifier.hpp).
//
// Legend: N = word length, t = a row (0..N), qd/vd = a head's query/value width, nnz = the
// nonzero weights of a matrix.
//
// The model counts the work the kernels do for row t, in units of about one multiply-add:
// - the embedding, the unembedding and the check of the row: d_model, the unembedding's
//   nonzeros and the states, twice;
// - every weight whose input may be nonzero: all nonzeros of the layer (q, k, v, o, MLP in and
//   out), times the share a compiled residual row keeps nonzero (one-hot blocks: a few percent;
//   the constant says how much);
// - a select head scores every causal key below key_tree_from_row (t keys of qd products), and
//   about 10 log2(N)^2 keys beyond it, through the key tree (position codes keep the keys within
//   Hamming distance 2; float64 keeps every term, so no key is skipped there);
// - an average head over a counter's keys costs a few groups, but in Float32 arithmetic a value
//   column with several values is summed over all t keys, and a counter's comb evaluates about
//   half its units one by one.
// The constants were fitted to `krc bench forward --file` on the project machine (zoo networks
// of both strategies at max-len 256 to 16384 and the 55-state TCP model; README "Verifying and
// running"), rounded up: the estimate errs towards fewer words, never towards a longer run.
#include <cmath>

#include "krc/prepared_network.hpp"
#include "krc/verifier.hpp"

namespace krc {

namespace {

constexpr double kSecondsPerUnit = 1.0e-9;  // one unit of work, about one multiply-add
constexpr double kActiveShare = 0.08;       // of a layer's nonzero weights, per row
constexpr double kTreeKeys = 10.0;          // keys scored per row through the tree / log2(N)^2
constexpr double kWordOverhead = 2000.0;    // per word: the automaton, the check, the buffers

struct LayerCost {
  double nonzeros = 0;       // weights of the layer
  double select_width = 0;   // sum of qd over select heads
  double average_width = 0;  // sum of vd over average heads
  double shared_units = 0;   // MLP units read through one linear form (combs)
};

// shared: count the comb units too (preparing each MLP, which takes a moment on large ones).
std::vector<LayerCost> layer_costs(const Network& network, bool shared) {
  std::vector<LayerCost> costs;
  for (const Layer& layer : network.layers) {
    LayerCost c;
    for (const AttentionHead& h : layer.heads) {
      c.nonzeros += static_cast<double>(h.query.nonZeros() + h.key.nonZeros() + h.value.nonZeros() +
                                        h.output.nonZeros());
      if (h.kind == HeadKind::Select)
        c.select_width += static_cast<double>(h.query.cols());
      else
        c.average_width += static_cast<double>(h.value.cols());
    }
    if (layer.mlp) {
      c.nonzeros +=
          static_cast<double>(layer.mlp->in_weight.nonZeros() + layer.mlp->out_weight.nonZeros());
      if (shared)
        for (const SharedInputUnits& group : prepare_mlp(*layer.mlp).shared_input)
          c.shared_units += static_cast<double>(group.units().size());
    }
    costs.push_back(c);
  }
  return costs;
}

// Per row, outside the layers.
double row_units(const Network& network) {
  return 2.0 * (network.d_model() + static_cast<double>(network.unembedding.nonZeros()) +
                static_cast<double>(network.states.size()));
}

}  // namespace

double estimated_cpu_seconds_per_word(const Network& network, int length,
                                      const ForwardOptions& options) {
  const double rows = length + 1.0;
  const double log_n = std::log2(std::max(2.0, rows));
  const bool float32 = options.arithmetic == Arithmetic::Float32;
  // Keys a select head scores, summed over the rows of the word.
  const double tree_from = std::min(rows, static_cast<double>(options.key_tree_from_row));
  double select_keys =
      tree_from * tree_from / 2.0 + (rows - tree_from) * std::min(rows, kTreeKeys * log_n * log_n);
  if (options.arithmetic == Arithmetic::Float64) select_keys = rows * rows / 2.0;
  double units = rows * row_units(network);
  for (const LayerCost& c : layer_costs(network, float32)) {
    units += rows * kActiveShare * c.nonzeros + c.select_width * select_keys;
    units += float32 ? c.average_width * rows * rows / 2.0 + rows * c.shared_units * 1.5
                     : rows * 16.0 * c.average_width;
  }
  return kSecondsPerUnit * (units + kWordOverhead);
}

double estimated_cpu_seconds_per_row(const Network& network, const ForwardOptions& options) {
  // One new row of a short word: the share of the weights, no long rows.
  double units = kWordOverhead + row_units(network);
  for (const LayerCost& c : layer_costs(network, options.arithmetic == Arithmetic::Float32)) {
    units += kActiveShare * c.nonzeros + 16.0 * (c.select_width + c.average_width);
    if (options.arithmetic == Arithmetic::Float32) units += 1.5 * c.shared_units;
  }
  return kSecondsPerUnit * units;
}

}  // namespace krc
