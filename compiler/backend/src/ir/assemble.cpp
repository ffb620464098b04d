#include "ir/assemble.hpp"

#include <algorithm>
#include <string>

#include "krc/automata/memory_budget.hpp"
#include "krc/runtime/network_memory.hpp"

namespace krc {

namespace {

using Triplet = Eigen::Triplet<float>;

SparseMatrix sparse(int rows, int cols, const std::vector<Entry>& entries, int row_offset = 0,
                    int col_offset = 0) {
  std::vector<Triplet> triplets;
  triplets.reserve(entries.size());
  for (const auto& e : entries)
    triplets.emplace_back(e.row + row_offset, e.col + col_offset, e.value);
  SparseMatrix m(rows, cols);
  m.setFromTriplets(triplets.begin(), triplets.end());
  m.prune(0.0f);
  return m;
}

RowMatrix dense(int rows, int cols, const std::vector<Entry>& entries) {
  RowMatrix m = RowMatrix::Zero(rows, cols);
  for (const auto& e : entries) m(e.row, e.col) += e.value;
  return m;
}

AttentionHead make_head(const HeadOp& op, int d) {
  AttentionHead head;
  head.name = op.name;
  head.role = op.role;
  head.kind = op.kind;
  head.query = sparse(d, op.key_dim, op.query);
  head.key = sparse(d, op.key_dim, op.key);
  head.value = sparse(d, op.value_dim, op.value);
  head.output = sparse(op.value_dim, d, op.output);
  return head;
}

Mlp make_mlp(const std::vector<const MlpOp*>& blocks, int d) {
  int hidden = 0;
  for (const auto* b : blocks) hidden += b->units;
  std::vector<Triplet> in, out;
  Mlp mlp;
  mlp.in_bias = Eigen::VectorXf::Zero(hidden);
  mlp.out_bias = Eigen::VectorXf::Zero(d);
  int first = 0;
  for (const auto* b : blocks) {
    for (const auto& e : b->in) in.emplace_back(e.row + first, e.col, e.value);
    for (const auto& e : b->out) out.emplace_back(e.row, e.col + first, e.value);
    for (int u = 0; u < b->units; ++u) mlp.in_bias[first + u] = b->bias[u];
    if (b->blocks.empty()) {
      mlp.blocks.push_back({b->name, first, b->units, b->role});
    } else {
      for (const auto& block : b->blocks)
        if (block.count > 0)
          mlp.blocks.push_back({block.name, first + block.first, block.count, block.role});
    }
    first += b->units;
  }
  mlp.in_weight.resize(hidden, d);
  mlp.in_weight.setFromTriplets(in.begin(), in.end());
  mlp.in_weight.prune(0.0f);
  mlp.out_weight.resize(d, hidden);
  mlp.out_weight.setFromTriplets(out.begin(), out.end());
  mlp.out_weight.prune(0.0f);
  return mlp;
}

// The network's size from the program and the schedule, before a matrix exists: the position
// embedding alone is (max_len + 1) x d_model floats, several GB at max-len 2^20.
NetworkShape planned_shape(const Program& program, const Schedule& plan) {
  NetworkShape shape;
  shape.d_model = program.layout().width();
  shape.max_len = program.max_len();
  shape.vocabulary = static_cast<std::int64_t>(program.vocabulary().size());
  shape.states = static_cast<std::int64_t>(program.states().size());
  shape.unembed_nonzeros = program.unembedding().size();
  shape.layers.resize(static_cast<std::size_t>(plan.layers));
  const auto& ops = program.ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    LayerSize& layer = shape.layers[static_cast<std::size_t>(plan.sublayer[i] / 2)];
    if (const auto* head = std::get_if<HeadOp>(&ops[i].body)) {
      layer.heads.push_back({head->key_dim, head->value_dim});
      layer.head_nonzeros +=
          head->query.size() + head->key.size() + head->value.size() + head->output.size();
    } else {
      const MlpOp& mlp = std::get<MlpOp>(ops[i].body);
      layer.mlp_hidden = layer.mlp_hidden.value_or(0) + mlp.units;
      layer.mlp_in_nonzeros += mlp.in.size();
      layer.mlp_out_nonzeros += mlp.out.size();
    }
  }
  return shape;
}

}  // namespace

Network assemble(const Program& program, const Schedule& plan) {
  program.check_weights_file_limit();
  const std::string what = "the compiled network (d_model " +
                           std::to_string(program.layout().width()) + ", max-len " +
                           std::to_string(program.max_len()) + ")";
  const std::uint64_t bytes = network_bytes(planned_shape(program, plan));
  check_memory(what, bytes);
  // Assembled beside the program, which is still held: the two together must fit. Each
  // sparse matrix passes through its triplets and Eigen's sorted copy on the way (measured:
  // the 178-state prefix tree's cascade, 533 MiB estimated, grew the resident size 940 MiB).
  check_resident_growth("assembling " + what, saturating_mul(bytes, 2));
  Network net;
  const int d = program.layout().width();
  net.max_len = program.max_len();
  net.vocabulary = program.vocabulary();
  net.states = program.states();
  net.residual_labels = program.layout().labels();
  for (const auto& s : program.layout().subspaces())
    net.subspaces.push_back({s.name, s.offset, s.width, s.role});
  net.token_embedding =
      dense(static_cast<int>(net.vocabulary.size()), d, program.token_embedding());
  net.position_embedding = dense(net.max_len + 1, d, program.position_embedding());
  net.unembedding = sparse(d, static_cast<int>(net.states.size()), program.unembedding());

  const auto& ops = program.ops();
  for (int layer = 0; layer < plan.layers; ++layer) {
    Layer out;
    std::vector<std::string> purposes;
    std::vector<const MlpOp*> blocks;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (plan.sublayer[i] / 2 != layer) continue;
      if (std::find(purposes.begin(), purposes.end(), ops[i].purpose) == purposes.end())
        purposes.push_back(ops[i].purpose);
      if (const auto* head = std::get_if<HeadOp>(&ops[i].body))
        out.heads.push_back(make_head(*head, d));
      else
        blocks.push_back(&std::get<MlpOp>(ops[i].body));
    }
    for (std::size_t p = 0; p < purposes.size(); ++p) out.purpose += (p ? "; " : "") + purposes[p];
    if (!blocks.empty()) out.mlp = make_mlp(blocks, d);
    net.layers.push_back(std::move(out));
  }
  return net;
}

}  // namespace krc
