#pragma once
// The number format a compiled network must be exact in (`krc compile --precision`), and what
// the bounds certify for a built network in each format (compiler/README.md "bf16 and fp16").
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "krc/runtime/forward.hpp"

namespace krc {

enum class Precision {
  Float32,   // today's networks: exact in a plain float32 framework
  BFloat16,  // exact when the model is cast to bfloat16 (Arithmetic::BFloat16)
  Float16,   // exact when the model is cast to IEEE float16 (Arithmetic::Float16)
};

const char* to_string(Precision p);                     // "fp32", "bf16", "fp16"
Precision precision_from_string(const std::string& s);  // throws std::invalid_argument
std::vector<std::string> precision_names();             // in enum order (the CLI's choices)
Arithmetic arithmetic_of(Precision p);  // the runtime arithmetic that runs a model cast to p

}  // namespace krc
