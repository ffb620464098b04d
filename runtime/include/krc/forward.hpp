#pragma once
// The forward pass (semantics in network.hpp), fast on compiled networks: sparse weights,
// sparse activations, mostly one-hot values, attention weights that are almost all zero.
//
// Precision::Float32: activations (the residual stream, q, k, v, attention-weighted value
// sums, MLP hidden units, logits) are stored in float32; every accumulation that produces one
// (a projection, a softmax sum, a weighted value sum, a residual update) runs in float64 and
// is rounded to float32 once. Softmax terms with s_j - max < -104 are skipped: they are
// exact zeros in float32. Precision::Float64: everything in double (terms below -746 are
// skipped, exact zeros in float64). Two sums are re-associated, not taken term by term: softmax
// over groups of equal keys (key_groups.cpp) and MLP units reading one linear form of the row
// (shared_input_units.hpp), whose hidden values are therefore not stored one by one.
//
// AttentionKind::Hard: Select heads take the argmax of the scores (ties to the latest
// position); Average heads have no argmax form and are evaluated as exact softmax.
#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "krc/automaton.hpp"
#include "krc/network.hpp"

namespace krc {

enum class Precision { Float32, Float64 };
const char* to_string(Precision precision);

struct ForwardOptions {
  AttentionKind attention = AttentionKind::Softmax;
  Precision precision = Precision::Float32;
  int threads = 0;  // words run in parallel; 0 = one per hardware thread
};

struct PreparedNetwork;  // sparse copies of the weights laid out for the kernels

// Prepares the network once (transposed sparse copies), then runs any number of words.
// Thread-safe: run() may be called concurrently. The network must outlive the ForwardPass.
class ForwardPass {
 public:
  explicit ForwardPass(const Network& network, ForwardOptions options = {});
  ~ForwardPass();
  ForwardPass(const ForwardPass&) = delete;
  ForwardPass& operator=(const ForwardPass&) = delete;

  const Network& network() const { return network_; }
  const ForwardOptions& options() const { return options_; }

  // Logits [word.size() + 1, states] for every prefix (row 0: BOS only). In Float32 mode
  // the values are float32 numbers held in doubles. Throws std::invalid_argument for a
  // word longer than max_len or a letter outside the vocabulary.
  Eigen::MatrixXd run(const std::vector<LetterId>& word) const;
  // Many words, in parallel (options.threads).
  std::vector<Eigen::MatrixXd> run(const std::vector<std::vector<LetterId>>& words) const;

 private:
  const Network& network_;
  ForwardOptions options_;
  std::unique_ptr<PreparedNetwork> prepared_;
};

// Per word [len + 1, states].
std::vector<Eigen::MatrixXf> forward_logits(const Network& network,
                                            const std::vector<std::vector<LetterId>>& words,
                                            const ForwardOptions& options = {});

// The argmax state after every prefix (ties: the lowest state index).
std::vector<std::vector<StateId>> predict_states(const Network& network,
                                                 const std::vector<std::vector<LetterId>>& words,
                                                 const ForwardOptions& options = {});

}  // namespace krc
