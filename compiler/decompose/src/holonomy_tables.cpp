// The complete action tables of a holonomy cascade: a breadth-first search over coordinate
// tuples from the encodings of the states. Each tuple's tile chain is mapped by every letter
// once; the new chain gives both the successor tuple and, for each level whose upper prefix
// is new, that level's action (which depends on the prefix only).
#include <stdexcept>
#include <string>

#include "krc/holonomy.hpp"
#include "krc/input_error.hpp"
#include "krc/memory_budget.hpp"

namespace krc {

void HolonomyDecomposition::build_tables(const DecomposeOptions& options) {
  const std::size_t levels = levels_.size(), letters = automaton_.letter_count();
  if (chain_count_ > 500'000 && options.progress)
    options.progress("action tables: up to " +
                     (chain_count_ == UINT64_MAX ? std::string("more than 10^19")
                                                 : std::to_string(chain_count_)) +
                     " coordinate tuples (tile chains); this may take a while");
  RowIndex tuples(levels);
  std::size_t cells = 0;
  // A cell: an int in an array that doubles (three copies at a reallocation) and its share of
  // the hash slots. The budget's message, like the limit's, says how far the tables got.
  const std::uint64_t bytes_per_cell = 16, budget_cells = memory_budget() / bytes_per_cell;
  auto so_far = [&] {
    return std::to_string(tuples.size()) + " coordinate tuples of " + std::to_string(levels) +
           " levels so far";
  };
  auto spend = [&](std::size_t more) {
    cells += more;
    if (cells > budget_cells)
      check_memory("the action tables of '" + automaton_.name() + "' (" + so_far() + ")",
                   saturating_mul(cells, bytes_per_cell));
    if (cells > options.max_table_cells)
      throw DecomposeLimitError("the action tables of '" + automaton_.name() + "' need more than " +
                                    std::to_string(options.max_table_cells) +
                                    " integers (the limit on table cells; " + so_far() + ")",
                                DecomposeLimitError::Limit::MaxTableCells, options.max_table_cells);
  };
  prefix_index_.clear();
  tables_.assign(levels, {});
  for (std::size_t d = 0; d < levels; ++d) prefix_index_.emplace_back(d);

  auto add_tuple = [&](const Coordinates& tuple) {
    bool added = false;
    std::size_t index = tuples.insert(tuple, &added);
    if (added) spend(levels + letters);
    if (added && tuples.size() > options.max_tuples)
      throw DecomposeLimitError("the holonomy cascade of '" + automaton_.name() +
                                    "' reaches more than " + std::to_string(options.max_tuples) +
                                    " coordinate tuples (the limit on tuples)",
                                DecomposeLimitError::Limit::MaxTuples, options.max_tuples);
    return static_cast<int>(index);
  };
  for (StateId q = 0; q < automaton_.state_count(); ++q) add_tuple(encode(q));

  std::vector<Chain> images(letters);
  Coordinates tuple(levels);
  std::size_t next_report = std::size_t{1} << 18;
  for (std::size_t i = 0; i < tuples.size(); ++i) {
    auto row = tuples.row(i);
    tuple.assign(row.begin(), row.end());
    const Chain chain = decode_chain(tuple);
    for (LetterId a = 0; a < letters; ++a) {
      images[a] = image_chain(chain, a);
      successor_.push_back(add_tuple(encode_chain(images[a])));
    }
    for (std::size_t d = 0; d < levels; ++d) {
      bool added = false;
      std::span<const int> prefix = std::span<const int>(tuple).first(d);
      prefix_index_[d].insert(prefix, &added);
      if (!added) continue;
      LevelTable& table = tables_[d];
      table.upper.emplace_back(prefix.begin(), prefix.end());
      auto& actions = table.action.emplace_back();
      spend(d);
      for (LetterId a = 0; a < letters; ++a) {
        actions.push_back(level_action(static_cast<int>(d), chain, images[a], a));
        spend(8 + actions.back().permutation.size());
      }
    }
    if (i + 1 >= next_report) {
      if (options.progress)
        options.progress("action tables: " + std::to_string(i + 1) + " of " +
                         std::to_string(tuples.size()) + "+ coordinate tuples done");
      next_report *= 2;
    }
  }
  reachable_.reserve(tuples.size());
  for (std::size_t i = 0; i < tuples.size(); ++i) {
    auto row = tuples.row(i);
    reachable_.emplace_back(row.begin(), row.end());
  }
  tables_built_ = true;
}

const std::vector<Coordinates>& HolonomyDecomposition::reachable() const {
  if (!tables_built_) throw std::logic_error("holonomy: the action tables were not built");
  return reachable_;
}

int HolonomyDecomposition::successor(std::size_t reachable_index, LetterId a) const {
  if (!tables_built_) throw std::logic_error("holonomy: the action tables were not built");
  return successor_.at(reachable_index * automaton_.letter_count() + a);
}

const HolonomyDecomposition::LevelTable& HolonomyDecomposition::table(int d) const {
  if (!tables_built_) throw std::logic_error("holonomy: the action tables were not built");
  return tables_.at(static_cast<std::size_t>(d));
}

int HolonomyDecomposition::upper_index(int d, std::span<const int> upper) const {
  if (!tables_built_) throw std::logic_error("holonomy: the action tables were not built");
  return static_cast<int>(prefix_index_.at(static_cast<std::size_t>(d)).find(upper));
}

}  // namespace krc
