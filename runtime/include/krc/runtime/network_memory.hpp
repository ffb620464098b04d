#pragma once
// What a network costs in memory, from sizes known before anything is built, for the memory
// budget (krc/automata/memory_budget.hpp). The loader estimates from the file's config and tensor
// shapes before it converts a tensor; the forward pass from the Network before it prepares its
// copies and before it allocates a word's buffers; a compiler can describe the network it is
// about to assemble (widths, heads, MLP units and their nonzeros) and check network_bytes
// first. Estimates follow the data structures of network.hpp, prepared_network.hpp and
// forward_kernels.hpp, with a factor 2 on every vector that grows by push_back.
#include <cstdint>
#include <optional>
#include <vector>

#include "krc/runtime/network.hpp"

namespace krc {

struct HeadSize {
  std::int64_t query_dim = 0, value_dim = 0;
};

struct LayerSize {
  std::vector<HeadSize> heads;
  std::uint64_t head_nonzeros = 0;  // of q, k, v and o of all heads together
  std::optional<std::int64_t> mlp_hidden;
  std::uint64_t mlp_in_nonzeros = 0, mlp_out_nonzeros = 0;
};

struct NetworkShape {
  std::int64_t d_model = 0, max_len = 0, vocabulary = 0, states = 0;
  std::uint64_t unembed_nonzeros = 0;
  std::vector<LayerSize> layers;
};

NetworkShape shape_of(const Network& network);

// The Network's matrices and vectors (names and labels not counted).
std::uint64_t network_bytes(const NetworkShape& shape);
// The forward pass's prepared copies (PreparedNetwork).
std::uint64_t prepared_bytes(const NetworkShape& shape);
// The buffers of one thread running a word of `letters` letters (activations, every head's
// projections and transposed keys, the attention and MLP scratch, the logits).
std::uint64_t word_buffer_bytes(const NetworkShape& shape, std::int64_t letters);

// LimitError unless the network and its prepared copies fit the memory budget.
void check_prepare_memory(const Network& network);
// LimitError unless the network, its prepared copies and the buffers for running words of up
// to `longest` letters on `threads` threads, with logits for `rows` positions in all, fit.
// `prepared`: the prepared copies' size where they exist (PreparedNetwork::bytes()); without
// it, prepared_bytes' upper bound.
void check_forward_memory(const Network& network, std::size_t words, std::size_t threads,
                          std::int64_t longest, std::uint64_t rows,
                          std::optional<std::uint64_t> prepared = std::nullopt);

}  // namespace krc
