#include "krc/automata/subset_construction.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"

namespace krc {

namespace {

using Subset = std::vector<StateId>;  // sorted, distinct

// The subsets made so far, their rows and the bytes they take, checked before each new one.
class SubsetTable {
 public:
  SubsetTable(const Nfa& nfa, std::size_t max_states) : nfa_(nfa), max_states_(max_states) {}

  // The id of `s`, adding it (and a row of pending targets) when new.
  StateId id_of(Subset&& s) {
    if (auto it = ids_.find(s); it != ids_.end()) return it->second;
    if (subsets_.size() >= max_states_)
      throw LimitError("determinising '" + nfa_.name + "' makes more than " +
                       std::to_string(max_states_) +
                       " subset states (--max-subset-states raises the limit)");
    // Each subset is kept twice (the list and the map's key), with a row, and at the end its
    // name twice (the names and the set that keeps them distinct, each a string of 32 bytes).
    std::uint64_t name_bytes = 2 + 32;
    for (StateId q : s) name_bytes += nfa_.states[q].size() + 1;
    bytes_ = saturating_add(bytes_, 2 * s.size() * sizeof(StateId) + 2 * name_bytes +
                                        nfa_.letters.size() * sizeof(StateId) + 160);
    check_memory("the subset construction of '" + nfa_.name + "'", bytes_);
    // Beside what the process already holds (the reader's automaton, its text), measured: every
    // kResidentStride subsets, four times the estimate of as many more must fit (issue 31). The
    // estimate alone is some three times low against the resident size (the allocator's
    // headers, the vectors' spare capacity): 2^18 subsets of a regular expression reached 365
    // MiB where it said 109 MiB.
    if (subsets_.size() % kResidentStride == 0 && subsets_.size() > 0) {
      check_resident_growth("the subset construction of '" + nfa_.name + "' (" +
                                std::to_string(subsets_.size()) + " subset states so far)",
                            saturating_mul(bytes_ - bytes_at_check_, 4));
      bytes_at_check_ = bytes_;
    }
    const auto id = static_cast<StateId>(subsets_.size());
    ids_.emplace(s, id);
    subsets_.push_back(std::move(s));
    return id;
  }
  const Subset& subset(StateId id) const { return subsets_[id]; }
  std::size_t size() const { return subsets_.size(); }

 private:
  const Nfa& nfa_;
  std::size_t max_states_;
  std::vector<Subset> subsets_;
  std::map<Subset, StateId> ids_;
  std::uint64_t bytes_ = 0;
  std::uint64_t bytes_at_check_ = 0;
  static constexpr std::size_t kResidentStride = 4096;
};

// The epsilon closure of `seeds` (a worklist; `mark` is all zero before and after), sorted.
Subset closure(const Nfa& nfa, Subset seeds, std::vector<char>& mark) {
  Subset out;
  for (StateId q : seeds)
    if (!mark[q]) mark[q] = 1, out.push_back(q);
  for (std::size_t i = 0; i < out.size(); ++i)
    for (StateId r : nfa.epsilon[out[i]])
      if (!mark[r]) mark[r] = 1, out.push_back(r);
  for (StateId q : out) mark[q] = 0;
  std::sort(out.begin(), out.end());
  return out;
}

std::string subset_name(const Nfa& nfa, const Subset& s) {
  std::string name = "{";
  for (std::size_t i = 0; i < s.size(); ++i) name += (i ? "," : "") + nfa.states[s[i]];
  return name + "}";
}

}  // namespace

Automaton determinise(const Nfa& nfa, std::size_t max_states) {
  const MemoryPhase phase("determinising");
  std::vector<char> mark(nfa.states.size(), 0);
  SubsetTable table(nfa, max_states);
  Subset seeds{nfa.initial};
  seeds.insert(seeds.end(), nfa.also_initial.begin(), nfa.also_initial.end());
  table.id_of(closure(nfa, std::move(seeds), mark));
  std::vector<std::vector<StateId>> delta(nfa.letters.size());
  // Breadth first: subset i's row is filled when i is reached, making new subsets as it goes.
  for (StateId i = 0; i < table.size(); ++i)
    for (LetterId a = 0; a < nfa.letters.size(); ++a) {
      Subset step;
      for (StateId q : table.subset(i))
        step.insert(step.end(), nfa.targets[a][q].begin(), nfa.targets[a][q].end());
      delta[a].push_back(table.id_of(closure(nfa, std::move(step), mark)));
    }
  // The names, kept twice, and the automaton built from them, beside the subsets still held.
  std::uint64_t name_bytes = 0;
  for (StateId i = 0; i < table.size(); ++i)
    name_bytes += subset_name(nfa, table.subset(i)).size() + 128;
  check_resident_growth(
      "naming the " + std::to_string(table.size()) + " subset states of '" + nfa.name + "'",
      saturating_mul(name_bytes, 3));
  std::vector<std::string> names;
  std::set<std::string> taken;  // state names with commas or braces could spell another subset
  std::vector<StateId> accepting;
  std::vector<char> is_accepting(nfa.states.size(), 0);
  for (StateId q : nfa.accepting) is_accepting[q] = 1;
  for (StateId i = 0; i < table.size(); ++i) {
    std::string name = subset_name(nfa, table.subset(i));
    while (!taken.insert(name).second) name += "'";
    names.push_back(std::move(name));
    const Subset& s = table.subset(i);
    if (std::any_of(s.begin(), s.end(), [&](StateId q) { return is_accepting[q] != 0; }))
      accepting.push_back(i);
  }
  return Automaton(nfa.name, std::move(names), nfa.letters, std::move(delta), 0,
                   std::move(accepting), nfa.description);
}

}  // namespace krc
