#pragma once
// Limits and progress reporting for the holonomy decomposition. Every limit turns into a
// krc::LimitError with a message that names it, never into a crash or an exhausted machine.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "krc/automata/input_error.hpp"

namespace krc {

struct DecomposeOptions {
  // Images of the state set kept in the skeleton (each costs about n/8 + 8 bytes + letters*4).
  std::size_t max_images = std::size_t{1} << 22;
  // ...and at most this many bytes for them (wide sets over many states reach it first).
  std::size_t max_image_bytes = std::size_t{512} << 20;
  // Build the complete action tables (reachable coordinate tuples and, per level, the action
  // of every letter for every reachable upper tuple). act() and apply() work without them.
  bool build_tables = true;
  // Reachable coordinate tuples in the action tables (each costs a few hundred bytes with its
  // share of the per-level actions: full_transformations_9 has 362,880 and needs ~160 MB).
  std::size_t max_tuples = 2'000'000;
  // Integers held by the action tables (coordinates of reachable tuples and upper tuples,
  // permutations of the actions): long tuples (many levels) reach it before max_tuples.
  std::size_t max_table_cells = 32'000'000;
  // Holonomy groups up to this order are enumerated element by element (names from element
  // order statistics, exact maximal normal subgroups); larger ones use Schreier-Sims only.
  std::uint64_t max_enumerated_group_order = 100'000;
  // Called with a one-line message when a stage is expected to take long, and as it goes.
  std::function<void(const std::string&)> progress;
};

// A limit of DecomposeOptions was reached. It says which one and its setting, so that a
// command can name the option that lifts it (README, "Errors": every limit error does).
class DecomposeLimitError : public LimitError {
 public:
  enum class Limit { MaxImages, MaxImageBytes, MaxTuples, MaxTableCells };
  DecomposeLimitError(const std::string& message, Limit limit, std::size_t value)
      : LimitError(message), limit_(limit), value_(value) {}
  Limit limit() const { return limit_; }
  std::size_t value() const { return value_; }

 private:
  Limit limit_;
  std::size_t value_;
};

}  // namespace krc
