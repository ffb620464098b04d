#pragma once
// The backend's entry point: Automaton -> Network by a chosen strategy. Each strategy is a
// plan (krc/backend/plan.hpp: what to build, decided from the automaton alone) and a builder (the
// weights, from the plan); auto plans and builds all three and keeps the best network
// (compiler/README.md, "Plan and build").
//   scan      parallel prefix over the letters' transformations: any automaton, ceil(log2 T)
//             layers
//   kr        Krohn-Rhodes cascade: memory units and Z_p counters, depth independent of T
//   onelayer  one attention layer (a rank-1 head as a contextual mapping) and feed-forward
//             decoding: 2 layers, width growing with the number of prefixes, bounded T only
//   auto      builds those that fit and keeps the one with the fewest layers (ties: the fewest
//             parameters)
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/backend/plan.hpp"
#include "krc/backend/precision.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

enum class Strategy { Auto, Scan, Kr, OneLayer };
Strategy strategy_from_string(const std::string& s);  // throws std::invalid_argument
const char* to_string(Strategy s);
std::vector<std::string> strategy_names();  // in enum order (the CLI's choices)

// What the residual stream must survive. LayerNorm: the position fetches (scan's, and kr's from
// t - 1) score with lambda 64 instead of 20, so every other key loses by at least 128 and
// float32's softmax gives it weight exactly 0: no leak reaches the residual, and the GPT-2
// export can prove its LayerNorms the identity (compiler/README.md §7). None: today's networks.
enum class Norm { None, LayerNorm };
Norm norm_from_string(const std::string& s);  // "none", "layernorm"; throws std::invalid_argument
const char* to_string(Norm n);
std::vector<std::string> norm_names();  // in enum order (the CLI's choices)

struct CompileOptions {
  Strategy strategy = Strategy::Auto;
  int max_len = 1024;
  AttentionKind attention = AttentionKind::Softmax;
  // The format the network must be exact in; bf16 and fp16 admit only the constructions
  // with a bound there (krc/backend/precision.hpp), and refuse otherwise.
  Precision precision = Precision::Float32;
  Norm norm = Norm::None;
  KrOptions kr;              // choices inside the kr construction (defaults: the best known)
  OneLayerOptions onelayer;  // the onelayer strategy's limits
  std::function<void(const std::string&)> progress;  // optional status lines
};

struct CompileResult {
  Network network;
  Strategy strategy = Strategy::Scan;    // the one used
  std::string reason;                    // why (for auto: the comparison)
  std::optional<ScanPlan> scan;          // the parallel prefix, when scan was built
  std::optional<KrPlan> kr;              // the cascade, when kr built one (kr, or auto)
  std::optional<WalkPlan> walk;          // the clamped walk, when kr built one (kr, or auto)
  std::optional<OneLayerPlan> onelayer;  // when onelayer was built
};

CompileResult compile(const Automaton& automaton, const CompileOptions& options);

// Throws LimitError, naming the strategy, why and the largest max-len, where `strategy` has no
// construction exact in options.precision (what plan() refuses first, for an automaton with
// letters; one without is exact in every format). fp32 admits every strategy; bf16 and fp16
// only the scan with its one-hot and binary-coordinate forms. Public so
// that a caller can tell this refusal from a network that does not fit (`krc bench precision`).
void check_precision(Strategy strategy, const CompileOptions& options);

}  // namespace krc
