#include "krc/automata/machine_outputs.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "krc/automata/memory_budget.hpp"
#include "krc/automata/name_table.hpp"

namespace krc {

namespace {

constexpr const char* kNoOutputYet = "-";  // a Mealy machine before its first letter

// A Moore machine under construction: transitions, outputs, initial state 0.
struct Moore {
  std::vector<std::vector<StateId>> delta;  // [letter][state]
  std::vector<std::string> output;          // [state]
};

// The states reachable from `initial`, with the automaton's own output per state.
Moore reachable_moore(const Automaton& a, const std::vector<std::string>& output) {
  std::vector<long> id(a.state_count(), -1);
  std::vector<StateId> order{a.initial()};
  id[a.initial()] = 0;
  for (std::size_t i = 0; i < order.size(); ++i)
    for (LetterId l = 0; l < a.letter_count(); ++l)
      if (StateId r = a.step(order[i], l); id[r] < 0) {
        id[r] = static_cast<long>(order.size());
        order.push_back(r);
      }
  Moore m{std::vector<std::vector<StateId>>(a.letter_count()), {}};
  for (StateId q : order) {
    m.output.push_back(output[q]);
    for (LetterId l = 0; l < a.letter_count(); ++l)
      m.delta[l].push_back(static_cast<StateId>(id[a.step(q, l)]));
  }
  return m;
}

// Each pair is held twice (the map's key and the list), with its row and output.
void check_pairs_growth(const Automaton& a, std::uint64_t pairs) {
  const std::uint64_t per_pair =
      2 * (sizeof(std::pair<StateId, std::string>) + 16) + 48 + a.letter_count() * sizeof(StateId);
  check_resident_growth(
      "the (state, output) pairs of '" + a.name() + "' (" + std::to_string(pairs) + " so far)",
      saturating_mul(pairs, per_pair));
}

// Mealy to Moore: the reachable pairs (q, output of the letter just read).
Moore mealy_pairs(const Automaton& a, const std::vector<std::vector<std::string>>& mealy) {
  std::map<std::pair<StateId, std::string>, StateId> id;
  std::vector<std::pair<StateId, std::string>> order{{a.initial(), kNoOutputYet}};
  id.emplace(order[0], 0);
  Moore m{std::vector<std::vector<StateId>>(a.letter_count()), {}};
  for (std::size_t i = 0; i < order.size(); ++i) {
    const StateId q = order[i].first;
    m.output.push_back(order[i].second);
    for (LetterId l = 0; l < a.letter_count(); ++l) {
      std::pair<StateId, std::string> next{a.step(q, l), mealy[l][q]};
      auto [it, fresh] = id.emplace(next, static_cast<StateId>(order.size()));
      if (fresh && (order.size() & (order.size() - 1)) == 0 && order.size() >= (1u << 16))
        check_pairs_growth(a, order.size());  // at each doubling: the pairs made so far again
      if (fresh) order.push_back(std::move(next));
      m.delta[l].push_back(it->second);
    }
  }
  return m;
}

// What minimising holds beside the automaton: the Moore machine (a row and an output string a
// state), and a round of refine's two block vectors and map from each state's signature (its
// block and its successors' blocks, a vector in a tree node); the resident check takes twice
// that, for the allocator's headers and spare capacity.
void check_refine_memory(const Automaton& a, std::uint64_t n) {
  release_free_memory();  // what the stage before freed (a subset construction's subsets)
  const std::uint64_t k = a.letter_count();
  const std::uint64_t per_state = 2 * k * sizeof(StateId) + 32 + 2 * sizeof(StateId) +
                                  (k + 1) * sizeof(StateId) + sizeof(std::vector<StateId>) + 64;
  const std::string what = "the partition refinement of '" + a.name() + "' (" + std::to_string(n) +
                           " states, " + std::to_string(k) + " letters)";
  check_memory(what, saturating_mul(n, per_state));
  check_resident_growth(what, saturating_mul(n, 2 * per_state));
}

// Moore's partition refinement: blocks by output, split by the blocks of the successors until
// nothing splits. Returns each state's block, numbered in order of first state.
std::vector<StateId> refine(const Moore& m) {
  const std::size_t n = m.output.size();
  std::vector<StateId> block(n);
  std::map<std::string, StateId> by_output;
  for (std::size_t q = 0; q < n; ++q)
    block[q] = by_output.emplace(m.output[q], static_cast<StateId>(by_output.size())).first->second;
  for (std::size_t count = by_output.size();;) {
    std::map<std::vector<StateId>, StateId> by_signature;
    std::vector<StateId> next(n);
    for (std::size_t q = 0; q < n; ++q) {
      std::vector<StateId> signature{block[q]};
      for (const auto& row : m.delta) signature.push_back(block[row[q]]);
      next[q] =
          by_signature.emplace(std::move(signature), static_cast<StateId>(by_signature.size()))
              .first->second;
    }
    block = std::move(next);
    if (by_signature.size() == count) return block;
    count = by_signature.size();
  }
}

}  // namespace

namespace {
constexpr NameTable<OutputKind> kOutputKindNames{"output",
                                                 {"state", "accepting", "mealy", "moore"}};
}  // namespace

OutputKind output_kind_from_string(const std::string& s) { return kOutputKindNames.parse(s); }
const char* to_string(OutputKind kind) { return kOutputKindNames.name(kind); }
std::vector<std::string> output_kind_names() { return kOutputKindNames.names(); }

OutputKind default_output(const Automaton& a, const MachineOutputs& outputs) {
  if (!outputs.mealy.empty()) return OutputKind::Mealy;
  if (!outputs.moore.empty()) return OutputKind::Moore;
  if (!a.accepting().empty() || outputs.acceptor) return OutputKind::Accepting;
  return OutputKind::State;
}

OutputMachine output_machine(const Automaton& a, const MachineOutputs& outputs, OutputKind kind) {
  if (kind == OutputKind::State) return {a, a.states(), a.state_count()};
  if (kind == OutputKind::Mealy && outputs.mealy.empty())
    throw std::invalid_argument("mealy: the file has no Mealy outputs (labels 'in / out')");
  if (kind == OutputKind::Moore && outputs.moore.empty())
    throw std::invalid_argument("moore: the file has no Moore outputs (state labels)");
  std::vector<std::string> per_state = outputs.moore;
  if (kind == OutputKind::Accepting) {
    per_state.assign(a.state_count(), "reject");
    for (StateId q : a.accepting()) per_state[q] = "accept";
  }
  // Minimising grows with the automaton (issue 31): named in a refusal, its rounds estimated.
  const MemoryPhase phase("minimising the automaton modulo its " + std::string(to_string(kind)) +
                          " output");
  check_refine_memory(a, a.state_count());  // a Mealy machine's pairs: checked as they grow
  const Moore m =
      kind == OutputKind::Mealy ? mealy_pairs(a, outputs.mealy) : reachable_moore(a, per_state);
  const std::vector<StateId> block = refine(m);
  const std::size_t blocks = *std::max_element(block.begin(), block.end()) + 1;
  std::vector<std::string> output(blocks), names(blocks);
  std::vector<std::vector<StateId>> delta(a.letter_count(), std::vector<StateId>(blocks));
  for (std::size_t q = 0; q < block.size(); ++q) {
    output[block[q]] = m.output[q];
    for (LetterId l = 0; l < a.letter_count(); ++l) delta[l][block[q]] = block[m.delta[l][q]];
  }
  std::set<std::string> taken;
  std::map<std::string, int> seen;
  for (std::size_t b = 0; b < blocks; ++b) {
    const int k = ++seen[output[b]];
    std::string name = k == 1 ? output[b] : output[b] + "#" + std::to_string(k);
    while (name.empty() || !taken.insert(name).second) name += "'";
    names[b] = std::move(name);
  }
  std::vector<StateId> accepting;
  if (kind == OutputKind::Accepting)
    for (std::size_t b = 0; b < blocks; ++b)
      if (output[b] == "accept") accepting.push_back(static_cast<StateId>(b));
  Automaton machine(a.name(), std::move(names), a.letters(), std::move(delta), block[0],
                    std::move(accepting), a.description());
  return {std::move(machine), std::move(output), m.output.size()};
}

}  // namespace krc
