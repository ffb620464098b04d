#include "export_onnx.hpp"

#include "krc/automata/input_error.hpp"
#include "output_file.hpp"
#include "python_script.hpp"

namespace krc::cli {

namespace fs = std::filesystem;

int run_export_onnx(const ExportOnnxRequest& r) {
  // Refused here, before Python starts, with the messages every other export gives.
  if (r.output == "-")
    throw InputError("command line", "--output",
                     "an ONNX model is written to a file, not to stdout (-)");
  front_door::refuse_output_over_inputs(r.output, {r.input});
  const fs::path script = find_tool_script("", "export_onnx.py");
  const std::string python = find_python("", script);
  std::string command = shell_quote(python) + " " + shell_quote(script.string());
  const fs::path core = core_dir_beside_binary();
  if (!core.empty()) command += " --core-dir " + shell_quote(core.string());
  command += " --max-bytes " + std::to_string(r.max_bytes);
  if (r.json) command += " --json";
  command += " " + shell_quote(r.input) + " " + shell_quote(r.output);
  return run_python_script(command, "export --format onnx", python + " " + script.string());
}

}  // namespace krc::cli
