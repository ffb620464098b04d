#include "precision_line.hpp"

#include <iostream>
#include <sstream>

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

bool warn_if_uncertified(const nlohmann::json& compiler, const std::string& arithmetic,
                         const std::string& file) {
  if (arithmetic != "bf16" && arithmetic != "fp16") return false;
  try {
    const nlohmann::json& exact_in = compiler.at("precision").at("exact_in");
    if (!exact_in.contains(arithmetic) || !exact_in.at(arithmetic).is_null()) return false;
    std::string certified;
    for (const auto& [format, longest] : exact_in.items())
      if (!longest.is_null())
        certified += (certified.empty() ? "" : ", ") + format + " up to max-len " +
                     with_thousands(longest.get<long long>());
    std::cerr << "krc: warning: " << file << " is not certified in " << arithmetic
              << " (exact in: " << (certified.empty() ? "no format" : certified)
              << "); its answers there may be wrong. krc compile --precision " << arithmetic
              << " builds a network exact in " << arithmetic << "\n";
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;  // notes without the member (older files): nothing to say
  }
}

std::string certified_line(const nlohmann::json& compiler) {
  try {
    if (!compiler.is_object() || !compiler.contains("certified")) return "";
    const nlohmann::json& c = compiler.at("certified");
    std::ostringstream margin;
    margin << c.at("margin").get<double>();
    return "certified at compile time (krc compile --certify): every word up to max-len " +
           with_thousands(c.at("max_len").get<long long>()) + " in " +
           c.at("arithmetic").get<std::string>() + ", rule " + c.at("rule").get<std::string>() +
           ", margin " + margin.str() +
           "; krc certify FILE proves it again and writes the certificate\n";
  } catch (const nlohmann::json::exception&) {
    return "";  // informational notes a file may fill with anything
  }
}

}  // namespace krc::cli
