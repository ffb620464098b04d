#include "valuations.hpp"

#include <algorithm>
#include <cctype>

namespace krc::frontend {

namespace {

std::string literal_name(const std::string& ap) {
  const bool plain = !ap.empty() && std::all_of(ap.begin(), ap.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '@' || static_cast<unsigned char>(c) >= 0x80;
  });
  if (plain) return ap;
  std::string quoted = "\"";
  for (char c : ap) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string valuation_letter(std::uint32_t v, const std::vector<std::string>& propositions) {
  if (propositions.empty()) return "t";
  std::string name;
  for (std::size_t j = 0; j < propositions.size(); ++j)
    name += (j ? "&" : "") + std::string(v >> j & 1 ? "" : "!") + literal_name(propositions[j]);
  return name;
}

TruthTable constant_table(std::size_t count, bool value) {
  const std::size_t valuations = std::size_t{1} << count;
  TruthTable t((valuations + 63) / 64, value ? ~std::uint64_t{0} : 0);
  if (valuations < 64) t[0] &= (std::uint64_t{1} << valuations) - 1;
  return t;
}

std::vector<TruthTable> proposition_tables(std::size_t count) {
  const std::size_t valuations = std::size_t{1} << count;
  std::vector<TruthTable> tables;
  for (std::size_t j = 0; j < count; ++j) {
    TruthTable t = constant_table(count, false);
    for (std::size_t v = 0; v < valuations; ++v)
      if (v >> j & 1) t[v / 64] |= std::uint64_t{1} << (v % 64);
    tables.push_back(std::move(t));
  }
  return tables;
}

}  // namespace krc::frontend
