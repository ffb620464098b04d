#pragma once
// The bookkeeping of one stage of the decomposition, kept apart from its algorithm. ggml's
// ggml_init({mem_size}) is the model: the budget accounts, the algorithm allocates. A stage
// counts items of one kind (images, table cells, tuples); the budget knows what an item costs at
// the peak, the memory budget (--max-memory) and the option that caps the count, and throws the
// error that names whichever is exceeded, the memory budget first. It also reports progress to
// DecomposeOptions::progress at doublings of a count, so that a long stage says how far it got.
#include <algorithm>
#include <cstdint>
#include <string>

#include "krc/automata/interrupt.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/decompose/decompose_options.hpp"

namespace krc {

class StageBudget {
 public:
  // An option's cap on the count, and how its error names it.
  struct Cap {
    std::uint64_t items = UINT64_MAX;
    DecomposeLimitError::Limit limit{};
    std::size_t setting = 0;
  };

  // bytes_per_item == 0: the items are not counted against the memory budget.
  StageBudget(const DecomposeOptions& options, std::uint64_t bytes_per_item, Cap cap)
      : options_(options),
        bytes_per_item_(bytes_per_item),
        memory_items_(bytes_per_item == 0 ? UINT64_MAX : memory_budget() / bytes_per_item),
        cap_(cap) {}

  // Items that fit in the memory budget, and the cap.
  std::uint64_t memory_items() const { return memory_items_; }
  const Cap& cap() const { return cap_; }
  // Items that fit both the memory budget and the cap.
  std::uint64_t items_allowed() const { return std::min(memory_items_, cap_.items); }

  // Checks a count of `items`: over the memory budget, check_memory's LimitError with `what()`
  // (what is being built, how far it got); over the cap, a DecomposeLimitError with
  // `cap_message()`. The messages are built only when one is thrown.
  template <typename What, typename CapMessage>
  // An interruption point too: every stage counts its items as it goes.
  void check(std::uint64_t items, What what, CapMessage cap_message) const {
    interruption_point();
    // At each doubling of the count's bytes past a mebibyte, the doubling to come must fit
    // beside what the process already holds (the automaton, the stages before): the estimate
    // alone bounds the stage, not the process (issue 31).
    if (bytes_per_item_ != 0 && items >= next_resident_check_) {
      const std::uint64_t bytes = saturating_mul(items, bytes_per_item_);
      next_resident_check_ = saturating_mul(items, 2);
      if (bytes >= (std::uint64_t{1} << 20)) check_resident_growth(what(), bytes);
    }
    if (items <= items_allowed()) return;
    if (items > memory_items_) check_memory(what(), saturating_mul(items, bytes_per_item_));
    throw DecomposeLimitError(cap_message(), cap_.limit, cap_.setting);
  }

  // Checks a stage's whole size up front against the memory budget alone.
  void check_memory_for(std::uint64_t items, const std::string& what) const {
    check_memory(what, saturating_mul(items, bytes_per_item_));
  }

  // A one-line progress message, built only when someone listens.
  template <typename Message>
  void say(Message message) const {
    if (options_.progress) options_.progress(message());
  }

 private:
  const DecomposeOptions& options_;
  std::uint64_t bytes_per_item_, memory_items_;
  Cap cap_;
  mutable std::uint64_t next_resident_check_ = 1;
};

// Says `message(done)` each time `done` reaches the next doubling from `first`.
class StageProgress {
 public:
  StageProgress(const StageBudget& budget, std::uint64_t first) : budget_(budget), next_(first) {}
  template <typename Message>
  void at(std::uint64_t done, Message message) {
    if (done < next_) return;
    budget_.say(message);
    next_ *= 2;
  }

 private:
  const StageBudget& budget_;
  std::uint64_t next_;
};

}  // namespace krc
