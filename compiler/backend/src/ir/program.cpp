#include "ir/program.hpp"

#include <algorithm>
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/runtime/weights_file.hpp"

namespace krc {

std::vector<std::string> vocabulary_of(const Automaton& automaton) {
  std::vector<std::string> vocab{"<bos>"};
  vocab.insert(vocab.end(), automaton.letters().begin(), automaton.letters().end());
  return vocab;
}

int MlpOp::add_unit(const std::vector<std::pair<int, float>>& inputs, float unit_bias,
                    const std::vector<std::pair<int, float>>& outputs) {
  int unit = units++;
  if (!blocks.empty()) blocks.back().count = units - blocks.back().first;
  for (auto [dim, w] : inputs) in.push_back({unit, dim, w});
  bias.push_back(unit_bias);
  for (auto [dim, w] : outputs) out.push_back({dim, unit, w});
  return unit;
}

void Program::check_position_growth() const {
  check_weights_file_limit();
  const std::uint64_t entries = position_embedding_.size();
  const std::uint64_t copies = saturating_mul(saturating_add(entries, 2 * entries), sizeof(Entry));
  const std::uint64_t dense = saturating_mul(
      saturating_mul(static_cast<std::uint64_t>(max_len_) + 1, layout_.width()), sizeof(float));
  check_memory("the position embedding of the network being compiled (max-len " +
                   std::to_string(max_len_) + ", " + std::to_string(layout_.width()) +
                   " residual dims so far)",
               saturating_add(copies, dense));
}

// krc's reader refuses a file whose embeddings hold more than kMaxDenseElements (a forged
// header cannot make it allocate without bound), and the writer will not write what it would
// refuse: a network past that is stopped while it grows, not after gigabytes are built.
void Program::check_weights_file_limit() const {
  const std::uint64_t elements =
      saturating_mul(static_cast<std::uint64_t>(max_len_) + 1, layout_.width());
  if (elements > static_cast<std::uint64_t>(kMaxDenseElements))
    throw LimitError("the position embedding of the network being compiled (max-len " +
                     std::to_string(max_len_) + ", " + std::to_string(layout_.width()) +
                     " residual dims so far) would exceed the " +
                     std::to_string(kMaxDenseElements) +
                     " elements krc's reader accepts, so it is not built (a smaller --max-len "
                     "makes a smaller network)");
}

const std::string& Op::name() const {
  return std::visit([](const auto& body) -> const std::string& { return body.name; }, body);
}

namespace {
std::vector<int> sorted_unique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}
}  // namespace

std::vector<int> Program::subspaces_of_rows(const std::vector<Entry>& entries) const {
  std::vector<int> ids;
  for (const auto& e : entries) ids.push_back(layout_.subspace_of(e.row));
  return sorted_unique(std::move(ids));
}

std::vector<int> Program::subspaces_of_cols(const std::vector<Entry>& entries) const {
  std::vector<int> ids;
  for (const auto& e : entries) ids.push_back(layout_.subspace_of(e.col));
  return sorted_unique(std::move(ids));
}

void Program::add(HeadOp head, const std::string& purpose) {
  Op op;
  std::vector<int> reads = subspaces_of_rows(head.query);
  for (const auto* part : {&head.key, &head.value}) {
    auto more = subspaces_of_rows(*part);
    reads.insert(reads.end(), more.begin(), more.end());
  }
  op.reads = sorted_unique(std::move(reads));
  std::vector<int> writes;
  for (const auto& e : head.output) writes.push_back(layout_.subspace_of(e.col));
  op.writes = sorted_unique(std::move(writes));
  op.purpose = purpose;
  op.body = std::move(head);
  ops_.push_back(std::move(op));
}

void Program::add(MlpOp mlp, const std::string& purpose) {
  Op op;
  std::vector<int> reads;
  for (const auto& e : mlp.in) reads.push_back(layout_.subspace_of(e.col));
  op.reads = sorted_unique(std::move(reads));
  op.writes = subspaces_of_rows(mlp.out);
  op.purpose = purpose;
  op.body = std::move(mlp);
  ops_.push_back(std::move(op));
}

}  // namespace krc
