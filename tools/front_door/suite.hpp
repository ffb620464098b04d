#pragma once
// A suite: many compiled networks in one directory, ready to load in a loop (issue 35, item 5).
// Both doors (`krc suite`, krc.suite) fill a SuiteRequest and call build_suite, which compiles
// every member (a named set of the zoo, plus automaton files) with every strategy and norm,
// verifies each network, and writes, through the one writer, one directory:
//
//   DIR/manifest.json                     one row per model (below)
//   DIR/<model>/weights.safetensors       krc compile's weights file
//   DIR/<model>/circuit.json              krc circuit's file (head granularity)
//   DIR/<model>/verify.json               krc verify --json's report, its timing left out
//   DIR/<model>/gpt2/{config.json, ...}   krc export --format gpt2's checkpoint, where it exists
//
// <model> is "<automaton>.<strategy>.<norm>". The directory is built beside its target and
// renamed into place in one step: a failure anywhere (a file that does not parse, a strategy
// that refuses a member, a network its verification finds wrong, Ctrl-C) leaves nothing. A
// missing GPT-2 checkpoint is not a failure: its row says why (hard attention, LayerNorms krc
// cannot prove the identity, over max_bytes). Every file is the same bytes from either door.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compile_request.hpp"
#include "output_file.hpp"

namespace krc::front_door {

// The named sets of the zoo: "small" (parity, flipflop_2, cyclic_3, gridworld_4), "zoo" (every
// family at its default size), "none" (the files only).
const std::vector<std::string>& suite_set_names();

struct SuiteRequest {
  std::string set = "small";
  std::vector<std::string> files;  // automaton files, any format krc compile reads
  std::vector<std::string> strategies = {"kr", "scan"};
  std::vector<std::string> norms = {"layernorm"};
  long long max_len = 64;
  long long verify_random = 64;     // random words of length max_len each network is checked on
  long long max_models = 64;        // refused above, before anything is compiled
  long long max_bytes = 4LL << 30;  // of all files together, checked as they are made
};

// The bounds both doors check: max_models at most kMaxSuiteModels, max_bytes at least 1.
inline constexpr long long kMaxSuiteModels = 1000;

struct SuiteProgress {
  long long done = 0, total = 0;  // models
  std::string model;              // the one just finished
  double seconds = 0;
  double seconds_left = -1;  // estimated from the models done; < 0 while unknown
};

// "suite: 3 of 8 models (parity.kr.layernorm), 12 s, about 20 s left".
std::string suite_progress_line(const SuiteProgress& p);

struct SuiteResult {
  nlohmann::json manifest;  // what manifest.json holds
  long long bytes = 0;      // of all files written
  double seconds = 0;
};

// Builds the suite and writes it to `output` (OutputOptions: the door's signal guarding and
// option name). Throws std::invalid_argument for a request outside the bounds (named the
// door's way), InputError for a member that cannot be read or compiled, LimitError past
// max_models or max_bytes, SuiteMismatch when a network's verification finds it wrong.
SuiteResult build_suite(const std::string& output, const SuiteRequest& request, Door door,
                        const std::function<void(const SuiteProgress&)>& progress,
                        const OutputOptions& options);

// A verification found a network of the suite wrong (exit status 1; nothing written).
struct SuiteMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace krc::front_door
