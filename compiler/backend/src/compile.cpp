#include "krc/compile.hpp"

#include <stdexcept>

#include "krc/assemble.hpp"
#include "krc/automaton_json.hpp"
#include "krc/scan_strategy.hpp"
#include "krc/schedule.hpp"

namespace krc {

Strategy strategy_from_string(const std::string& s) {
  if (s == "auto") return Strategy::Auto;
  if (s == "scan") return Strategy::Scan;
  if (s == "kr") return Strategy::Kr;
  throw std::invalid_argument("unknown strategy '" + s + "' (auto, scan or kr)");
}

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::Auto: return "auto";
    case Strategy::Scan: return "scan";
    case Strategy::Kr: return "kr";
  }
  return "?";
}

namespace {

Network finish(const Program& program, const Automaton& automaton, const CompileOptions& options,
               Strategy strategy) {
  Network net = assemble(program, schedule(program));
  net.attention = options.attention;
  net.automaton = automaton_to_json(automaton);
  net.compiler = {{"strategy", to_string(strategy)}, {"krc_version", "0.1.0"}};
  return net;
}

}  // namespace

CompileResult compile(const Automaton& automaton, const CompileOptions& options) {
  if (options.max_len < 1) throw std::invalid_argument("max_len must be at least 1");
  CompileResult result;
  switch (options.strategy) {
    case Strategy::Scan:
    case Strategy::Auto:  // until the Krohn-Rhodes backend lands
      result.network = finish(scan_program(automaton, options.max_len), automaton, options,
                              Strategy::Scan);
      result.strategy = Strategy::Scan;
      result.reason = "parallel prefix over the letters' transformations";
      break;
    case Strategy::Kr:
      throw std::invalid_argument("strategy kr is not implemented yet");
  }
  return result;
}

}  // namespace krc
