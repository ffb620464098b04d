#include "interrupt_scope.hpp"

#include <signal.h>

#include "bindings.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::python {

namespace {

struct sigaction g_python_action {};  // Python's, called after ours
int g_depth = 0;                      // nested scopes (a progress callback that compiles)

extern "C" void request_then_python(int signal) {
  request_interrupt();
  if (g_python_action.sa_handler != SIG_DFL && g_python_action.sa_handler != SIG_IGN)
    g_python_action.sa_handler(signal);
}

bool on_main_thread() {
  const py::object main = py::module_::import("threading").attr("main_thread")();
  return main.attr("ident").cast<unsigned long>() == PyThread_get_thread_ident();
}

}  // namespace

InterruptScope::InterruptScope() {
  if (g_depth > 0 || !on_main_thread()) return;
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) ||
      current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)
    return;
  g_python_action = current;
  clear_interrupt();
  struct sigaction ours = current;
  ours.sa_handler = request_then_python;
  if (sigaction(SIGINT, &ours, nullptr) != 0) return;
  installed_ = true;
  ++g_depth;
}

InterruptScope::~InterruptScope() {
  if (!installed_) return;
  sigaction(SIGINT, &g_python_action, nullptr);
  clear_interrupt();
  --g_depth;
}

}  // namespace krc::python
