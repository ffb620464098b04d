// The complete action tables of a holonomy cascade: a breadth-first search over coordinate
// tuples from the encodings of the states. Each tuple's tile chain is mapped by every letter
// once; the new chain gives both the successor tuple and, for each level whose upper prefix
// is new, that level's action (which depends on the prefix only).
#include <stdexcept>
#include <string>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/decompose/holonomy.hpp"
#include "stage_budget.hpp"

namespace krc {

// The tables' bookkeeping: cells (integers) against the memory budget and max_table_cells,
// coordinate tuples against max_tuples, and progress. A cell: an int in an array that doubles
// (three copies at a reallocation) and its share of the hash slots. The messages say how far the
// tables got.
class HolonomyDecomposition::TableBudget {
 public:
  TableBudget(const HolonomyDecomposition& h, const DecomposeOptions& options,
              const RowIndex& tuples);

  void spend(std::uint64_t more) {
    spent_ += more;
    cells_.check(
        spent_, [&] { return "the action tables of '" + name_ + "' (" + so_far() + ")"; },
        [&] {
          return "the action tables of '" + name_ + "' need more than " +
                 std::to_string(cells_.cap().items) + " integers (the limit on table cells; " +
                 so_far() + ")";
        });
  }

  // A new tuple: its coordinates and successor row.
  void tuple_added() {
    spend(levels_ + letters_);
    tuple_count_.check(
        tuples_.size(), [] { return std::string(); },
        [&] {
          return "the holonomy cascade of '" + name_ + "' reaches more than " +
                 std::to_string(tuple_count_.cap().items) +
                 " coordinate tuples (the limit on tuples)";
        });
  }

  void done(std::size_t tuples_done) {
    progress_.at(tuples_done, [&] {
      return "action tables: " + std::to_string(tuples_done) + " of " +
             std::to_string(tuples_.size()) + "+ coordinate tuples done";
    });
  }

 private:
  std::string so_far() const {
    return std::to_string(tuples_.size()) + " coordinate tuples of " + std::to_string(levels_) +
           " levels so far";
  }

  std::string name_;
  std::size_t levels_, letters_;
  const RowIndex& tuples_;
  StageBudget cells_, tuple_count_;
  StageProgress progress_;
  std::uint64_t spent_ = 0;
};

HolonomyDecomposition::TableBudget::TableBudget(const HolonomyDecomposition& h,
                                                const DecomposeOptions& options,
                                                const RowIndex& tuples)
    : name_(h.automaton_.name()),
      levels_(h.levels_.size()),
      letters_(h.automaton_.letter_count()),
      tuples_(tuples),
      cells_(options, 16,
             {options.max_table_cells, DecomposeLimitError::Limit::MaxTableCells,
              options.max_table_cells}),
      tuple_count_(options, 0,
                   {options.max_tuples, DecomposeLimitError::Limit::MaxTuples, options.max_tuples}),
      progress_(cells_, std::size_t{1} << 18) {
  if (h.chain_count_ > 500'000)
    cells_.say([&] {
      return "action tables: up to " +
             (h.chain_count_ == UINT64_MAX ? std::string("more than 10^19")
                                           : std::to_string(h.chain_count_)) +
             " coordinate tuples (tile chains); this may take a while";
    });
}

// 1. The encodings of the states; 2. breadth first over the tuples: each new tuple's successors
// and the actions of its new prefixes; 3. the tuples as rows.
void HolonomyDecomposition::build_tables(const DecomposeOptions& options) {
  const std::size_t levels = levels_.size();
  RowIndex tuples(levels);
  TableBudget budget(*this, options, tuples);
  prefix_index_.clear();
  tables_.assign(levels, {});
  for (std::size_t d = 0; d < levels; ++d) prefix_index_.emplace_back(d);
  for (StateId q = 0; q < automaton_.state_count(); ++q) add_tuple(tuples, encode(q), budget);

  std::vector<Chain> images(automaton_.letter_count());
  Coordinates tuple(levels);
  for (std::size_t i = 0; i < tuples.size(); ++i) {
    auto row = tuples.row(i);
    tuple.assign(row.begin(), row.end());
    const Chain chain = decode_chain(tuple);
    add_successors(tuples, chain, images, budget);
    add_level_actions(tuple, chain, images, budget);
    budget.done(i + 1);
  }
  reachable_.reserve(tuples.size());
  for (std::size_t i = 0; i < tuples.size(); ++i) {
    auto row = tuples.row(i);
    reachable_.emplace_back(row.begin(), row.end());
  }
  tables_built_ = true;
}

int HolonomyDecomposition::add_tuple(RowIndex& tuples, const Coordinates& tuple,
                                     TableBudget& budget) {
  bool added = false;
  const std::size_t index = tuples.insert(tuple, &added);
  if (added) budget.tuple_added();
  return static_cast<int>(index);
}

// The images of a tuple's chain under every letter, and the successor tuples.
void HolonomyDecomposition::add_successors(RowIndex& tuples, const Chain& chain,
                                           std::vector<Chain>& images, TableBudget& budget) {
  for (LetterId a = 0; a < automaton_.letter_count(); ++a) {
    images[a] = image_chain(chain, a);
    successor_.push_back(add_tuple(tuples, encode_chain(images[a]), budget));
  }
}

// For each level whose upper prefix of `tuple` is new, that level's action under every letter.
void HolonomyDecomposition::add_level_actions(std::span<const int> tuple, const Chain& chain,
                                              const std::vector<Chain>& images,
                                              TableBudget& budget) {
  for (std::size_t d = 0; d < levels_.size(); ++d) {
    bool added = false;
    const std::span<const int> prefix = tuple.first(d);
    prefix_index_[d].insert(prefix, &added);
    if (!added) continue;
    LevelTable& table = tables_[d];
    table.upper.emplace_back(prefix.begin(), prefix.end());
    auto& actions = table.action.emplace_back();
    budget.spend(d);
    for (LetterId a = 0; a < automaton_.letter_count(); ++a) {
      actions.push_back(level_action(static_cast<int>(d), chain, images[a], a));
      budget.spend(8 + actions.back().permutation.size());
    }
  }
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
