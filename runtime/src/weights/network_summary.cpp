#include "krc/runtime/network_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "krc/automata/thousands.hpp"

namespace krc {

nlohmann::json network_summary(const Network& network) {
  const NetworkSize size = network.size();
  nlohmann::json roles = nlohmann::json::array();
  for (std::size_t i = 0; i < network.layers.size(); ++i) {
    const Layer& layer = network.layers[i];
    nlohmann::json heads = nlohmann::json::array();
    for (const auto& h : layer.heads)
      heads.push_back(
          {{"name", h.name}, {"kind", to_string(h.kind)}, {"role", role_to_json(h.role)}});
    nlohmann::json blocks = nlohmann::json::array();
    if (layer.mlp)
      for (const auto& b : layer.mlp->blocks)
        blocks.push_back({{"name", b.name}, {"units", b.count}, {"role", role_to_json(b.role)}});
    roles.push_back({{"layer", i}, {"purpose", layer.purpose}, {"heads", heads}, {"mlp", blocks}});
  }
  return {{"layers", size.layers},         {"d_model", size.d_model},
          {"heads", size.heads},           {"mlp_hidden", size.mlp_hidden},
          {"parameters", size.parameters}, {"nonzeros", size.nonzeros},
          {"max_len", network.max_len},    {"attention", to_string(network.attention)},
          {"layer_roles", roles}};
}

std::string network_size_line(const Network& network) {
  const NetworkSize size = network.size();
  std::ostringstream out;
  out << size.layers << (size.layers == 1 ? " layer" : " layers") << ", d_model " << size.d_model
      << ", " << size.heads << (size.heads == 1 ? " head" : " heads");
  std::vector<int> widths;
  for (int w : size.mlp_hidden)
    if (w > 0) widths.push_back(w);
  if (!widths.empty()) {
    auto [lo, hi] = std::minmax_element(widths.begin(), widths.end());
    long long total = 0;
    for (int w : widths) total += w;
    out << ", MLP hidden " << *lo;
    if (*hi != *lo) out << ".." << *hi;
    out << " (total " << with_thousands(total) << ")";
  }
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.2g%%",
                size.parameters ? 100.0 * double(size.nonzeros) / double(size.parameters) : 0.0);
  out << "; " << with_thousands(size.parameters) << " parameters, " << with_thousands(size.nonzeros)
      << " nonzeros (" << percent << ")";
  return out.str();
}

std::string network_layers_text(const Network& network) {
  std::ostringstream out;
  for (std::size_t i = 0; i < network.layers.size(); ++i) {
    const Layer& layer = network.layers[i];
    out << "layer " << i << ": " << layer.purpose << "\n";
    for (const auto& h : layer.heads)
      out << "    head  " << h.name << " [" << to_string(h.kind) << "]\n";
    if (layer.mlp)
      for (const auto& b : layer.mlp->blocks)
        out << "    mlp   " << b.name << " (" << with_thousands(b.count) << " units)\n";
  }
  return out.str();
}

}  // namespace krc
