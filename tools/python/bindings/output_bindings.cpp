// krc._core.write_file and write_directory: the Python door writes through the same writer as
// the krc command (front_door/output_file.hpp), so that no output path is ever destroyed from
// either door. Python keeps its own signal handlers: Ctrl-C during a write raises
// KeyboardInterrupt once the file is whole or gone.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "interrupt_scope.hpp"
#include "output_file.hpp"

namespace krc::python {

namespace {

front_door::OutputOptions python_output(std::vector<std::string> inputs, std::string keyword) {
  front_door::OutputOptions options;
  options.inputs = std::move(inputs);
  options.option = std::move(keyword);
  options.guard_signals = false;
  return options;
}

}  // namespace

void bind_output(py::module_& m) {
  m.def(
      "write_file",
      [](const std::string& path, const py::bytes& data, std::vector<std::string> inputs,
         std::string keyword) {
        const std::string_view bytes = data;  // stays alive in the caller's frame
        const auto options = python_output(std::move(inputs), std::move(keyword));
        InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
        py::gil_scoped_release unlocked;
        front_door::write_output(path, bytes, options);
      },
      py::arg("path"), py::arg("data"), py::arg("inputs") = std::vector<std::string>{},
      py::arg("keyword") = "path",
      "Writes `data` to `path`: a regular file whole or not at all (a temporary beside it, "
      "renamed), a device or FIFO in place, never over one of `inputs`.");
  m.def(
      "write_directory",
      [](const std::string& path, const std::vector<std::pair<std::string, py::bytes>>& files,
         std::vector<std::string> inputs, std::string keyword) {
        std::vector<front_door::DirectoryFile> contents;
        for (const auto& [name, data] : files) contents.emplace_back(name, std::string(data));
        const auto options = python_output(std::move(inputs), std::move(keyword));
        InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
        py::gil_scoped_release unlocked;
        front_door::write_output_directory(path, contents, options);
      },
      py::arg("path"), py::arg("files"), py::arg("inputs") = std::vector<std::string>{},
      py::arg("keyword") = "directory",
      "Writes `files` ((name, bytes) pairs) as the directory `path`, built beside it and "
      "renamed into place; an existing directory only when it holds nothing but those files.");
}

}  // namespace krc::python
