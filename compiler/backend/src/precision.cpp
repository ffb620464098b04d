// Precision's name table, and which constructions are exact in which format (the derivations
// are in compiler/README.md "bf16 and fp16").
#include "krc/backend/precision.hpp"

#include <iterator>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/automata/name_table.hpp"
#include "precision_plan.hpp"

namespace krc {

namespace {
struct PrecisionName {
  Precision precision;
  const char* name;
  Arithmetic arithmetic;
};
constexpr PrecisionName kPrecisionNames[] = {
    {Precision::Float32, "fp32", Arithmetic::Float32},
    {Precision::BFloat16, "bf16", Arithmetic::BFloat16},
    {Precision::Float16, "fp16", Arithmetic::Float16},
};
static_assert(std::size(kPrecisionNames) == enum_count<Precision>);

// The largest max-len the float32 constructions are built and checked for (runtime/README.md
// "In a plain float32 framework").
constexpr long long kFloat32Longest = 65536;
}  // namespace

const char* to_string(Precision p) { return kPrecisionNames[static_cast<int>(p)].name; }

Precision precision_from_string(const std::string& s) {
  std::string names;
  for (const PrecisionName& p : kPrecisionNames) {
    if (s == p.name) return p.precision;
    names += std::string(names.empty() ? "" : ", ") + p.name;
  }
  throw std::invalid_argument("unknown precision '" + s + "' (" + names + ")");
}

std::vector<std::string> precision_names() {
  std::vector<std::string> names;
  for (const PrecisionName& p : kPrecisionNames) names.push_back(p.name);
  return names;
}

Arithmetic arithmetic_of(Precision p) { return kPrecisionNames[static_cast<int>(p)].arithmetic; }

void check_precision(Strategy strategy, const CompileOptions& options) {
  if (options.precision == Precision::Float32 || strategy == Strategy::Scan) return;
  const std::string format = to_string(options.precision);
  const std::string why =
      strategy == Strategy::Kr
          ? "its counters average over up to max-len positions and its memory heads score "
            "lambda((N + 1) flag + j), which must tell j from j + 1; neither has a bound in " +
                format + " yet (compiler/README.md \"bf16 and fp16\")"
          : "its contextual mapping gives every prefix a distinct number, which needs more "
            "significant bits than " +
                format + " has; no bound is derived";
  throw LimitError(std::string(to_string(strategy)) + ": no construction is known exact in " +
                   format + " at any max-len (" + why +
                   "); the largest max-len: none; --strategy scan is exact in " + format +
                   " at every max-len krc accepts");
}

bool scan_integer_form_allowed(const CompileOptions& options) {
  return options.precision == Precision::Float32;
}

nlohmann::json exact_formats(const CompileResult& result) {
  const long long max_len = result.network.max_len;
  // The network for no letters (<bos> its whole vocabulary) has no layers: one weight 1 in the
  // embedding, one per state in the unembedding, and no sums: exact in every format at any length.
  if (result.network.vocabulary.size() == 1)
    return {{"fp32", max_len}, {"bf16", max_len}, {"fp16", max_len}};
  // One-hot and binary scan forms: selects whose runner-ups stay e^-40 below (exact 0, 1 or -1
  // after rounding) and compose units on small integers: exact in every format (README).
  const bool one_hot_scan = result.strategy == Strategy::Scan && result.scan &&
                            result.scan->form != ScanForm::IntegerCoordinates;
  nlohmann::json exact = nlohmann::json::object();
  exact["fp32"] = max_len <= kFloat32Longest ? nlohmann::json(max_len) : nlohmann::json(nullptr);
  for (const char* narrow : {"bf16", "fp16"})
    exact[narrow] = one_hot_scan ? nlohmann::json(max_len) : nlohmann::json(nullptr);
  return exact;
}

}  // namespace krc
