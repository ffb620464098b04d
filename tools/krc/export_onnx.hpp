#pragma once
// `krc export FILE --format onnx -o OUT`: the ONNX model of a krc network, written by the Python
// package's export (krc.onnx_export through tools/export_onnx.py), so that the command line and
// Network.to_onnx give the same bytes from one implementation.
#include <string>

namespace krc::cli {

struct ExportOnnxRequest {
  std::string input, output;
  long long max_bytes = 0;  // the dense weights' budget (ONNX holds at most 2 GiB in any case)
  bool json = false;
};

// The exit status: 0 written, 2 refused (the script's message on stderr), 130 interrupted.
int run_export_onnx(const ExportOnnxRequest& request);

}  // namespace krc::cli
