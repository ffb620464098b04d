#pragma once
// The forward pass in Arithmetic::BFloat16 and Arithmetic::Float16: what a GPU framework
// computes for a model cast to that format (README "bf16 and fp16"). Every weight is rounded
// to the format once; every stored tensor (the embedding sum, the residual stream after each
// add, q, k, v, scores, softmax weights, head outputs, MLP pre-activations and outputs,
// logits) is rounded to it; each matrix product sums its exact float32 products in a float32
// running sum, in ascending order of the summed index, and is rounded once; softmax runs in
// float32 on the rounded scores. Infinities and NaNs propagate as in a dense product
// (0 * inf is NaN), so an fp16 overflow shows as it would on a GPU.
//
// Written straight from that definition, with dense causal attention (every key scored), and
// sparse only where skipping a term provably changes no bit: a zero product added to a float32
// running sum that starts at +0 leaves it unchanged, unless a factor is infinite or NaN, and
// such rows are never skipped.
#include <Eigen/Dense>
#include <optional>
#include <vector>

#include "forward/narrow_format.hpp"
#include "krc/runtime/forward.hpp"

namespace krc::narrow {

// A matrix read as "input coordinate r adds x_r * row r", weights rounded to the format.
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<int> start;  // rows + 1 offsets
  std::vector<int> column;
  std::vector<float> value;         // nonzero after rounding
  std::vector<char> nonfinite_row;  // rows holding an infinity: read even where x_r is 0
  bool any_nonfinite = false;

  // Row r of m (transpose = false) or column r of m (transpose = true).
  static Matrix of(const SparseMatrix& m, bool transpose, Rounding round);
};

// acc[j] += x[r] * W[r][j] for every r in ascending order, float32, as a dense product would:
// terms with x[r] = 0 are skipped unless row r holds an infinity, and a non-finite x[r] makes
// every output it has no weight for NaN (inf * 0).
void accumulate(const Matrix& w, const float* x, float* acc);
// The same over the listed inputs only (ascending), each finite, of a matrix without infinities.
void accumulate_listed(const Matrix& w, const std::vector<int>& inputs, const float* x, float* acc);

struct Head {
  HeadKind kind = HeadKind::Select;
  Matrix query, key, value, output;  // input dim -> head dims; value dim -> residual dims
};

struct Mlp {
  Matrix in;   // input dim -> hidden units
  Matrix out;  // hidden unit -> residual dims
  std::vector<float> in_bias, out_bias;
  std::vector<int> positive_bias;  // units with ReLU(bias) > 0: active when no input reaches them
};

struct Layer {
  std::vector<Head> heads;
  std::optional<Mlp> mlp;
};

class Forward {
 public:
  Forward(const Network& network, Arithmetic format, AttentionKind attention);
  // Logits [word.size() + 1, states], each a value of the format (or inf/NaN).
  Eigen::MatrixXd run(const std::vector<LetterId>& word) const;

 private:
  using Rows = std::vector<float>;  // [rows x width], row-major
  void attention(const Layer& layer, Rows& x, int n) const;
  Rows head_output(const Head& head, const Rows& x, int n) const;
  void softmax_row(HeadKind kind, std::vector<float>& scores) const;
  void mlp(const Mlp& mlp, Rows& x, int n) const;

  const Network& network_;
  Rounding round_;
  AttentionKind attention_;
  int d_ = 0;
  float scale_ = 1.0f;
  RowMatrix token_, position_;
  std::vector<Layer> layers_;
  Matrix unembedding_;
};

}  // namespace krc::narrow
