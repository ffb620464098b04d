#pragma once
// Ctrl-C in Python while krc works without the GIL (tools/README.md, "Ctrl-C"). Python's own SIGINT
// handler only notes the signal for the main thread's next bytecode, which never comes while
// C++ runs. For the length of a call, an InterruptScope made on the main thread puts a handler
// in front of Python's: it calls krc::request_interrupt(), so the work stops at its next
// interruption point, and then Python's handler, so that the signal is still pending for
// Python. krc::Interrupted then becomes whatever Python's handler raises (KeyboardInterrupt by
// default; errors.cpp). Nothing is changed when SIGINT is ignored or left to the system, or
// off the main thread (Python delivers signals to the main thread only).
// The flag is one for the process: krc work running on another thread at that moment stops
// too (with KeyboardInterrupt there); the flag is cleared when the main thread's call ends.
namespace krc::python {

class InterruptScope {
 public:
  InterruptScope();  // with the GIL held
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  bool installed_ = false;
};

}  // namespace krc::python
