// The translation of krc's C++ exceptions into krc.InputError and krc.LimitError, with the
// command line's messages spelt for Python (front_door::spelt_for: `max_len`, not `--max-len`),
// here for every exception that reaches Python, so that no message needs a Python copy. The
// standard exceptions keep pybind11's types (std::invalid_argument, a bad argument that no file
// carried, is ValueError; std::bad_alloc MemoryError), with the message spelt the same way.
#include "errors.hpp"

#include "bindings.hpp"
#include "compile_request.hpp"
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
std::string spelt(const std::string& message) {
  return front_door::spelt_for(front_door::Door::Python, message);
}

// Sets the Python error `type` with the message spelt for Python.
void set_spelt(PyObject* type, const char* message) {
  PyErr_SetString(type, spelt(message).c_str());
}

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
    } catch (const py::error_already_set&) {
      throw;  // a Python error already: pybind11 restores it
    } catch (const InputError& e) {
      // The problem is spelt; the file and the place name things, not options.
      const InputError python(e.file(), e.place(), spelt(e.problem()));
      raise("InputError", std::string(python.what()), python.file(), python.place(),
            python.problem());
    } catch (const OptionLimitError& e) {
      raise("LimitError", spelt(e.what()), py::str(e.option()));
    } catch (const LimitError& e) {
      raise("LimitError", spelt(e.what()), option_named_in(e.what()));
    } catch (const py::builtin_exception& e) {
      // py::value_error and the like: their own type, the message spelt.
      e.set_error();
      if (spelt(e.what()) == e.what()) return;
      PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
      PyErr_Fetch(&type, &value, &trace);
      set_spelt(type, e.what());
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(trace);
    } catch (const std::bad_alloc&) {
      throw;  // MemoryError
    } catch (const std::out_of_range& e) {
      set_spelt(PyExc_IndexError, e.what());
    } catch (const std::overflow_error& e) {
      set_spelt(PyExc_OverflowError, e.what());
    } catch (const std::invalid_argument& e) {
      set_spelt(PyExc_ValueError, e.what());
    } catch (const std::domain_error& e) {
      set_spelt(PyExc_ValueError, e.what());
    } catch (const std::length_error& e) {
      set_spelt(PyExc_ValueError, e.what());
    } catch (const std::range_error& e) {
      set_spelt(PyExc_ValueError, e.what());
    } catch (const std::exception& e) {
      set_spelt(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace krc::python
