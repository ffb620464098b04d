// The translation of krc's C++ exceptions into krc.InputError and krc.LimitError, with the same
// messages. std::invalid_argument (a bad argument that no file carried) stays pybind11's
// ValueError and std::bad_alloc its MemoryError.
#include "errors.hpp"

#include "bindings.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::python {

namespace {

// Raises krc.errors.<name>(*arguments): the classes live in Python so that users can subclass
// and pickle them like any exception.
template <typename... Arguments>
void raise(const char* name, const Arguments&... arguments) {
  py::object cls = py::module_::import("krc.errors").attr(name);
  py::object instance = cls(arguments...);
  PyErr_SetObject(cls.ptr(), instance.ptr());
}

// The memory budget's message names the command's --max-memory, or (spelt for Python by the
// request layer, compile_request.hpp) the max_memory of krc.set_max_memory.
py::object option_named_in(const std::string& message) {
  if (message.find("max-memory") != std::string::npos ||
      message.find("max_memory") != std::string::npos)
    return py::str("max_memory");
  return py::none();
}

}  // namespace

void bind_errors(py::module_&) {
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Interrupted&) {
      // Ctrl-C (interrupt_scope.hpp): what Python's handler raises, KeyboardInterrupt by default.
      if (PyErr_CheckSignals() == 0 && !PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const InputError& e) {
      raise("InputError", std::string(e.what()), e.file(), e.place(), e.problem());
    } catch (const OptionLimitError& e) {
      raise("LimitError", std::string(e.what()), py::str(e.option()));
    } catch (const LimitError& e) {
      raise("LimitError", std::string(e.what()), option_named_in(e.what()));
    }
  });
}

}  // namespace krc::python
