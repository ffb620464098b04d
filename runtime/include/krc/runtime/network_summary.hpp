#pragma once
// What a compiled network looks like, for people (`krc compile`, `krc info FILE`) and for
// programs (--json): sizes, and layer by layer which heads and MLP blocks do what.
#include <nlohmann/json.hpp>
#include <string>

#include "krc/runtime/network.hpp"

namespace krc {

// {"layers", "d_model", "heads", "mlp_hidden": [...], "parameters", "nonzeros", "max_len",
//  "attention", "layer_roles": [{"layer", "purpose", "heads": [{"name","kind","role"}],
//  "mlp": [{"name","units","role"}]}]}  (roles: krc/runtime/role.hpp)
nlohmann::json network_summary(const Network& network);

// "15 layers, d_model 89, 15 heads, MLP hidden 6..2304 (total 3,172); 163,229 parameters,
// 27,548 nonzeros (16.9%)"
std::string network_size_line(const Network& network);

// One block per layer: its purpose, heads and MLP blocks.
std::string network_layers_text(const Network& network);

}  // namespace krc
