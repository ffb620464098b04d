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
  check_growth(inputs.size(), outputs.size());
  int unit = units++;
  if (!blocks.empty()) blocks.back().count = units - blocks.back().first;
  for (auto [dim, w] : inputs) in.push_back({unit, dim, w});
  bias.push_back(unit_bias);
  for (auto [dim, w] : outputs) out.push_back({dim, unit, w});
  return unit;
}

namespace {

// The capacity a vector of `size` elements with room for `capacity` takes to hold `more` more,
// as libstdc++ grows it (doubling), or `capacity` when it needs no new storage.
std::uint64_t grown_capacity(std::size_t size, std::size_t capacity, std::size_t more) {
  if (size + more <= capacity) return capacity;
  return std::max<std::uint64_t>(2 * std::uint64_t{size}, std::uint64_t{size} + more);
}

}  // namespace

// A large automaton's units grow the program by gigabytes (the 4,115-state minimised prefix
// tree's cascade: past 8 GiB): before a vector doubles, the new storage (which lives beside
// the old while it is copied) must fit beside what the process already holds.
void MlpOp::check_growth(std::size_t inputs, std::size_t outputs) const {
  const std::uint64_t grow_in = grown_capacity(in.size(), in.capacity(), inputs);
  const std::uint64_t grow_out = grown_capacity(out.size(), out.capacity(), outputs);
  const std::uint64_t grow_bias = grown_capacity(bias.size(), bias.capacity(), 1);
  std::uint64_t more = 0;
  if (grow_in != in.capacity()) more = saturating_add(more, grow_in * sizeof(Entry));
  if (grow_out != out.capacity()) more = saturating_add(more, grow_out * sizeof(Entry));
  if (grow_bias != bias.capacity()) more = saturating_add(more, grow_bias * sizeof(float));
  if (more == 0) return;
  // Small growths are read together: the resident size is read once a mebibyte of new storage
  // (of this thread's programs), so many small ops cannot slip past the check one by one.
  thread_local std::uint64_t unread = 0;
  unread = saturating_add(unread, more);
  if (unread < (std::uint64_t{1} << 20)) return;
  unread = 0;
  check_resident_growth("the hidden units of '" + name + "' (" + std::to_string(units) +
                            " units, " + std::to_string(in.size() + out.size()) +
                            " weights so far)",
                        more);
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
