#include "precision_line.hpp"

#include "krc/automata/thousands.hpp"

namespace krc::cli {

std::string precision_line(const nlohmann::json& compiler) {
  try {
    if (!compiler.is_object() || !compiler.contains("precision")) return "";
    const nlohmann::json& p = compiler.at("precision");
    std::string line =
        "precision: compiled for " + p.at("compiled_for").get<std::string>() + "; exact in ";
    std::string none;
    bool first = true;
    for (const auto& [format, longest] : p.at("exact_in").items()) {
      if (longest.is_null()) {
        none += (none.empty() ? "" : ", ") + format;
        continue;
      }
      line += (first ? "" : ", ") + format + " up to max-len " +
              with_thousands(longest.get<long long>());
      first = false;
    }
    if (first) line += "no format";
    if (!none.empty()) line += "; not certified in " + none;
    return line + "\n";
  } catch (const nlohmann::json::exception&) {
    return "";  // informational notes a file may fill with anything
  }
}

}  // namespace krc::cli
