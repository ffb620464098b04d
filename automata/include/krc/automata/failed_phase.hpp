#pragma once
// The phase a failure left (issue 31). While a MemoryPhase (memory_budget.hpp) lives, check_memory
// and check_resident_growth begin their messages with its name ("minimising the automaton modulo
// its accepting output: ..."); a std::bad_alloc that no estimate foresaw is caught only after
// every MemoryPhase has been unwound, so the innermost phase an exception left is kept for its
// handler to name.
#include <string>

namespace krc {

// The phase under way on this thread, else the innermost one the last exception unwound; empty
// when there is neither.
std::string failed_phase();

}  // namespace krc
