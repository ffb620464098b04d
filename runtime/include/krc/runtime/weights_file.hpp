#pragma once
// krc's weights file: a Network as safetensors (see README, "Weights file format").
//   embed.token [V, d], embed.position [max_len+1, d], unembed [d, states],
//   layers.{i}.attn.{q,k,v} [H, d, hd], layers.{i}.attn.o [H, hd, d],
//   layers.{i}.mlp.in.{weight [hidden, d], bias [hidden]}, layers.{i}.mlp.out.{weight [d, hidden],
//   bias [d]}
// all F32; a mostly-zero tensor X may be stored as X.indices (I32 [nnz, rank], sorted) and
// X.values (F32 [nnz]) with its dense shape in the "sparse" metadata. __metadata__ holds
// format, version, config, automaton, residual_labels, compiler and sparse (JSON strings).
#include <string>

#include "krc/runtime/network.hpp"
#include "krc/runtime/safetensors.hpp"

namespace krc {

struct WriteOptions {
  enum class Storage {
    Auto,    // sparse when it saves space: nnz*(4+4*rank) < 4*numel and numel > 4096
    Dense,   // every tensor dense
    Sparse,  // every tensor sparse
  };
  Storage storage = Storage::Auto;
};

// Throws std::invalid_argument when the network's shapes disagree (Network::check_shapes).
TensorFile network_to_tensor_file(const Network& network, const WriteOptions& options = {});
std::string network_to_safetensors(const Network& network, const WriteOptions& options = {});

// Validates every field against the config (shapes, labels, vocabulary, states, the
// automaton, sparse indices, finite values); problems are InputErrors naming `file` and the
// tensor or metadata key.
Network network_from_safetensors(const TensorFile& tensors, const std::string& file);
Network load_network(const std::string& path);

// Limits on the sizes a file may declare, so that a forged header cannot make the reader
// allocate without bound (a dense tensor is bounded by the file size, a sparse one is not).
inline constexpr long long kMaxDimension = 1LL << 24;
inline constexpr long long kMaxDenseElements = 1LL << 28;

}  // namespace krc
