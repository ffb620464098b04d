#pragma once
// The backend's intermediate form: a residual layout, embedding and unembedding entries, and
// a list of operations (attention heads and MLP blocks) in program order. The scheduler packs
// the operations into as few transformer layers as their data dependencies allow; assembly
// turns the result into a Network. All weights are (row, column, value) entries in terms of
// residual dimensions, because compiled networks are almost entirely zeros.
#include <string>
#include <variant>
#include <vector>

#include "ir/residual_layout.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

class Automaton;

// The vocabulary of a compiled network: "<bos>" then the automaton's letters (every strategy
// starts its program from it).
std::vector<std::string> vocabulary_of(const Automaton& automaton);

struct Entry {
  int row = 0;
  int col = 0;
  float value = 0.0f;
};

// One attention head. q = x query, k = x key, v = x value, x += (sum_j p_j v_j) output.
struct HeadOp {
  std::string name;
  Role role;
  HeadKind kind = HeadKind::Select;
  int key_dim = 0;
  int value_dim = 0;
  std::vector<Entry> query;   // (residual dim, q index)
  std::vector<Entry> key;     // (residual dim, k index)
  std::vector<Entry> value;   // (residual dim, v index)
  std::vector<Entry> output;  // (v index, residual dim)
};

// Hidden units that act together: x += out * ReLU(in * x + bias). Units can be grouped in
// named blocks (e.g. "compose" and "clear scratch") that must run in the same MLP because
// they update the same values in place.
struct MlpOp {
  std::string name;
  Role role;  // of the single block called `name` when `blocks` is empty
  int units = 0;
  std::vector<MlpBlock> blocks;  // named ranges of units; empty = one block called `name`
  std::vector<Entry> in;         // (unit, residual dim)
  std::vector<float> bias;       // one per unit
  std::vector<Entry> out;        // (residual dim, unit)

  // Adds a unit ReLU(sum inputs + bias) whose activation is written with the given weights.
  int add_unit(const std::vector<std::pair<int, float>>& inputs, float bias,
               const std::vector<std::pair<int, float>>& outputs);
  // LimitError (the memory budget) when adding a unit of that many inputs and outputs would
  // reallocate storage that does not fit beside the process's resident size.
  void check_growth(std::size_t inputs, std::size_t outputs) const;
  // Units added from now on belong to a block with this name.
  void begin_block(std::string block_name, Role block_role) {
    blocks.push_back({std::move(block_name), units, 0, block_role});
  }
};

struct Op {
  std::variant<HeadOp, MlpOp> body;
  std::string purpose;     // the layer role it serves, e.g. "scan step 3", "level 2"
  std::vector<int> reads;  // subspace ids, derived from the weights
  std::vector<int> writes;

  bool is_head() const { return std::holds_alternative<HeadOp>(body); }
  const std::string& name() const;
};

class Program {
 public:
  Program(std::vector<std::string> vocabulary, std::vector<std::string> states, int max_len)
      : vocabulary_(std::move(vocabulary)), states_(std::move(states)), max_len_(max_len) {}

  ResidualLayout& layout() { return layout_; }
  const ResidualLayout& layout() const { return layout_; }
  int max_len() const { return max_len_; }
  // lambda of the position-fetch heads (attention_heads.hpp): 20 by default, 64 under
  // `--norm layernorm` (a gap of 128, past float32 exp's underflow; compiler/README.md §7).
  float select_sharpness() const { return select_sharpness_; }
  void set_select_sharpness(float lambda) { select_sharpness_ = lambda; }
  const std::vector<std::string>& vocabulary() const { return vocabulary_; }
  const std::vector<std::string>& states() const { return states_; }

  void embed_token(int token, int dim, float value) {
    token_embedding_.push_back({token, dim, value});
  }
  void embed_position(int position, int dim, float value) {
    if (position_embedding_.size() == position_embedding_.capacity()) check_position_growth();
    position_embedding_.push_back({position, dim, value});
  }
  void unembed(int dim, int state, float value) { unembedding_.push_back({dim, state, value}); }
  // Throws LimitError when the dense position embedding would pass the limit krc's reader
  // accepts (kMaxDenseElements): checked as the network grows and before it is assembled.
  void check_weights_file_limit() const;

  void add(HeadOp head, const std::string& purpose);
  void add(MlpOp mlp, const std::string& purpose);

  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<Entry>& token_embedding() const { return token_embedding_; }
  const std::vector<Entry>& position_embedding() const { return position_embedding_; }
  const std::vector<Entry>& unembedding() const { return unembedding_; }

 private:
  // Position entries grow with max_len times the position features (a scan at max-len 2^20
  // writes gigabytes of them): before the array doubles, its old and new copies and the dense
  // position embedding they will become are checked against the memory budget.
  void check_position_growth() const;
  std::vector<int> subspaces_of_rows(const std::vector<Entry>& entries) const;
  std::vector<int> subspaces_of_cols(const std::vector<Entry>& entries) const;

  ResidualLayout layout_;
  std::vector<std::string> vocabulary_, states_;
  int max_len_;
  float select_sharpness_ = 20.0f;
  std::vector<Entry> token_embedding_, position_embedding_, unembedding_;
  std::vector<Op> ops_;
};

}  // namespace krc
