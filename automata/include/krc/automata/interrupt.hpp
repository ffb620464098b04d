#pragma once
// Cooperative cancellation for all of krc (tools/README.md, "Ctrl-C"). A door that wants Ctrl-C to
// stop a long computation (the Python bindings) has its signal handler call request_interrupt();
// every long loop (the semigroup's closure, which compiling spends most time in, each stage of
// the decomposition, each layer of each word a forward pass runs, the certifier, the GPT-2
// export's prover, the writer) calls interruption_point() at bounded intervals, which throws
// Interrupted once it was requested.
// The exception unwinds like any other, so nothing partial is kept: outputs are written only
// after the work, through the one writer. A check is one relaxed atomic load.
#include <atomic>

namespace krc {

// What an interrupted computation throws; the doors turn it into KeyboardInterrupt (Python).
// Not a std::exception, so that the handlers that try the next strategy or record a failure
// (catch (const std::exception&)) let it through; catch (...) blocks rethrow it.
struct Interrupted {
  const char* what() const noexcept { return "interrupted"; }
};

namespace detail {
inline std::atomic<bool> g_interrupt_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
}  // namespace detail

// Async-signal-safe: a signal handler may call it.
inline void request_interrupt() noexcept {
  detail::g_interrupt_requested.store(true, std::memory_order_relaxed);
}
inline void clear_interrupt() noexcept {
  detail::g_interrupt_requested.store(false, std::memory_order_relaxed);
}
inline bool interrupt_requested() noexcept {
  return detail::g_interrupt_requested.load(std::memory_order_relaxed);
}

// Throws Interrupted when an interrupt was requested. Call it where a loop has done at most a
// few milliseconds of work since the last call.
inline void interruption_point() {
  if (interrupt_requested()) throw Interrupted();
}

}  // namespace krc
