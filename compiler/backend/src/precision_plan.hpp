#pragma once
// How the planner honours CompileOptions::precision (krc/backend/precision.hpp).
#include <nlohmann/json.hpp>

#include "krc/backend/compile.hpp"

namespace krc {

// check_precision (the refusal of a strategy in a format) is declared in krc/backend/compile.hpp.
// Whether the scan may use its integer-coordinate form (exact in float32 only).
bool scan_integer_form_allowed(const CompileOptions& options);
// {"fp32": L, "bf16": L, "fp16": L}: for a built network, the largest length the bounds certify
// in each format (its max_len), or null where none is certified.
nlohmann::json exact_formats(const CompileResult& result);

}  // namespace krc
