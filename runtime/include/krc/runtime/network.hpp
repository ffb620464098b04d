#pragma once
// A compiled transformer in memory: what the backend produces, what the weights file stores
// and what the forward pass runs. Decoder-only, causal, no LayerNorm:
//
//   x_t   = token_embedding[token_t] + position_embedding[t]       (t = 0 is BOS, id 0)
//   layer: x_t += sum_h ( sum_{j<=t} p_h[t,j] * (x_j value_h) ) output_h,
//          p_h[t,.] = softmax_j( scale * (x_t query_h) . (x_j key_h) )
//          x_t += out_weight * ReLU(in_weight * x_t + in_bias) + out_bias
//   logits_t = x_t unembedding;  argmax = state after t letters (t = 0: the initial state)
//
// Compiled weights are almost all zeros, so matrices are sparse here; the file may store
// them dense or sparse (see weights_file.hpp).
#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "krc/runtime/role.hpp"

namespace krc {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using SparseMatrix = Eigen::SparseMatrix<float, Eigen::RowMajor, int>;

// Select: by design nearly all weight on one position (lookups, memory units); under `hard`
// attention it becomes an argmax (ties to the latest position).
// Average: by design a weighted sum over many positions (counters); no argmax form exists,
// so `hard` attention evaluates it as softmax.
enum class HeadKind { Select, Average };
// Softmax: every head as written. Hard: select heads take the argmax (ties to the latest
// position), average heads stay softmax. Hardmax: every head, average ones included, takes
// the hardmax of Yun et al. (2020) and Kajitsuka & Sato (2024): weight 1/|M| on each of the
// positions M where the score is maximal, 0 elsewhere (ties share the weight uniformly).
enum class AttentionKind { Softmax, Hard, Hardmax };

const char* to_string(HeadKind kind);
const char* to_string(AttentionKind kind);
HeadKind head_kind_from_string(const std::string& s);            // throws std::invalid_argument
AttentionKind attention_kind_from_string(const std::string& s);  // throws std::invalid_argument
std::vector<std::string> attention_kind_names();  // in enum order (the CLI's choices)

struct AttentionHead {
  std::string name;  // what the head does, e.g. "scan 3: fetch prefix at t-4"
  Role role;         // the same, as a typed role
  HeadKind kind = HeadKind::Select;
  SparseMatrix query;   // [d_model, head_dim]:  q_t = x_t query
  SparseMatrix key;     // [d_model, head_dim]
  SparseMatrix value;   // [d_model, head_dim]
  SparseMatrix output;  // [head_dim, d_model]:  x_t += (sum_j p[t,j] v_j) output
};

// A named range of hidden units, e.g. "level 2: reset lookup".
struct MlpBlock {
  std::string name;
  int first = 0;
  int count = 0;
  Role role;
};

struct Mlp {
  SparseMatrix in_weight;        // [hidden, d_model]
  Eigen::VectorXf in_bias;       // [hidden]
  SparseMatrix out_weight;       // [d_model, hidden]
  Eigen::VectorXf out_bias;      // [d_model]
  std::vector<MlpBlock> blocks;  // cover [0, hidden) in order
  int hidden() const { return static_cast<int>(in_bias.size()); }
};

// A named range of residual dimensions, e.g. "level 2 coordinate" (its dimensions' labels
// are "level 2 coordinate:<value>").
struct ResidualSubspace {
  std::string name;
  int first = 0;
  int width = 0;
  Role role;
};

struct Layer {
  std::string purpose;  // e.g. "scan step 3" or "level 1: memory"
  std::vector<AttentionHead> heads;
  std::optional<Mlp> mlp;
};

struct NetworkSize {
  int layers = 0, d_model = 0, heads = 0;
  std::vector<int> mlp_hidden;  // per layer, 0 when the layer has no MLP
  long long parameters = 0;     // every entry of every tensor, as if dense
  long long nonzeros = 0;
};

struct Network {
  int max_len = 0;                      // longest input word the network is built for
  std::vector<std::string> vocabulary;  // token ids: 0 = "<bos>", then the letters
  std::vector<std::string> states;      // one logit per state, in the automaton's order
  RowMatrix token_embedding;            // [vocabulary, d_model]
  RowMatrix position_embedding;         // [max_len + 1, d_model]
  SparseMatrix unembedding;             // [d_model, states]
  std::vector<Layer> layers;
  std::vector<std::string> residual_labels;  // one per residual dimension
  std::vector<ResidualSubspace> subspaces;   // cover the residual dimensions in order; may be
                                             // empty (a file that does not record them)
  float attention_scale = 1.0f;              // scores = scale * q.k (lambda is in the weights)
  AttentionKind attention = AttentionKind::Softmax;  // what the network was compiled for
  nlohmann::json automaton;                          // the compiled automaton, native JSON
  nlohmann::json compiler;                           // strategy, decomposition summary, notes

  int d_model() const { return static_cast<int>(residual_labels.size()); }
  NetworkSize size() const;
  // Checks every shape against d_model, vocabulary, states and max_len; throws
  // std::invalid_argument naming the tensor.
  void check_shapes() const;
};

}  // namespace krc
