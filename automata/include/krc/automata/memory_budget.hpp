#pragma once
// One memory budget for all of krc (README, "Errors"). Every stage that allocates in proportion
// to its input (reading a file, the semigroup, the skeleton and tables, compiling, loading a
// network, a forward pass) first estimates its peak from sizes it already knows and calls
// check_memory, which stops it with a LimitError naming the budget and the option that lifts it
// (--max-memory) when the estimate is over. Nothing is reserved or tracked: the budget bounds
// each stage's estimate, so a hostile size fails before the allocation it would have caused.
#include <cstdint>
#include <optional>
#include <string>

namespace krc {

// The budget in bytes: what set_memory_budget set, else default_memory_budget().
std::uint64_t memory_budget();
void set_memory_budget(std::uint64_t bytes);
// Half of the memory this process may use: the machine's physical memory, or the cgroup's
// limit when lower; and at most 3/4 of the address-space limit (ulimit -v, prlimit --as).
std::uint64_t default_memory_budget();

// Throws LimitError("WHAT needs about X, more than the memory budget (--max-memory Y)") when
// bytes > memory_budget(). `what` says what is being built ("the action tables of 'T5'").
void check_memory(const std::string& what, std::uint64_t bytes);

// The process's resident size now (/proc/self/statm), 0 where the system does not say and
// under AddressSanitizer (whose shadow memory it would count).
std::uint64_t resident_bytes();
// For a stage that grows as it goes (a program's hidden units, one by one): before a growth
// of `more` bytes, LimitError("PHASE: WHAT: the process holds X resident and would need about
// Y more, more than the memory budget (--max-memory Z)") unless the resident size plus `more`
// fits (PHASE: the MemoryPhase under way, if any). Nothing where the resident size is unknown.
// Called where storage is about to be reallocated, so its cost is one read a doubling.
void check_resident_growth(const std::string& what, std::uint64_t more);

// Names the phase under way on this thread ("building the Krohn-Rhodes cascade network") for
// check_resident_growth's message, while it lives; the phase before it is named again after.
class MemoryPhase {
 public:
  explicit MemoryPhase(std::string name);
  ~MemoryPhase();
  MemoryPhase(const MemoryPhase&) = delete;
  MemoryPhase& operator=(const MemoryPhase&) = delete;

 private:
  std::string previous_;
};

// Returns the heap's free memory to the system (glibc keeps what a parser's many small nodes
// freed): called after a stage that freed much, so that the next stage's peak is its own.
void release_free_memory();

// "1.5 GiB", "640 KiB", "12 bytes": how the budget and estimates are printed.
std::string byte_size_text(std::uint64_t bytes);
// Parses "512M", "2G", "1.5GiB", "4096" (bytes; K, M, G, T are powers of 1024, "B" or "iB"
// optional); nullopt when malformed, zero or beyond 2^64 - 1.
std::optional<std::uint64_t> parse_byte_size(const std::string& text);

// Estimates multiply and add sizes that a forged file declares: they saturate at 2^64 - 1
// instead of wrapping around to something small.
inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}
inline std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

}  // namespace krc
