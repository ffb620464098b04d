#include "compile_request.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/backend/plan.hpp"
#include "krc/backend/precision.hpp"
#include "krc/runtime/certify.hpp"

namespace krc::front_door {

void check_member(Door door, const std::string& keyword, const std::string& value,
                  const std::vector<std::string>& names) {
  if (std::find(names.begin(), names.end(), value) != names.end()) return;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + ("\"" + n + "\"");
  throw std::invalid_argument(option_name(door, keyword) + " \"" + value + "\": must be one of " +
                              list);
}

void check_range(Door door, const std::string& keyword, long long value, long long min,
                 long long max) {
  if (value >= min && value <= max) return;
  throw std::invalid_argument(option_name(door, keyword) + " " + std::to_string(value) +
                              " is not in [" + std::to_string(min) + ", " + std::to_string(max) +
                              "]");
}

std::string option_name(Door door, const std::string& keyword) {
  if (door == Door::Python) return keyword;
  std::string flag = "--" + keyword;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

PreparedCompile prepare_compile(const Automaton& automaton, const MachineOutputs& outputs,
                                const CompileRequest& r, Door door, const std::string& source) {
  check_member(door, "strategy", r.strategy, strategy_names());
  check_member(door, "attention", r.attention,
               {to_string(AttentionKind::Softmax), to_string(AttentionKind::Hard)});
  check_member(door, "precision", r.precision, precision_names());
  check_member(door, "norm", r.norm, norm_names());
  std::vector<std::string> countings = counter_sum_names();
  countings.insert(countings.begin(), "auto");
  check_member(door, "counting", r.counting, countings);
  if (!r.output_kind.empty()) check_member(door, "output_kind", r.output_kind, output_kind_names());
  check_range(door, "max_len", r.max_len, 1, kMaxLenLimit);
  const long long int_max = std::numeric_limits<int>::max();
  check_range(door, "max_onelayer_units", r.max_onelayer_units, 1, int_max);
  check_range(door, "max_onelayer_values", r.max_onelayer_values, 1, kMaxOneLayerValuesLimit);

  PreparedCompile p;
  // The network answers the chosen output: its states are those of the output's Moore
  // machine, minimised modulo the output and named by it (machine_outputs.hpp).
  p.kind = r.output_kind.empty() ? default_output(automaton, outputs)
                                 : output_kind_from_string(r.output_kind);
  try {
    p.machine = output_machine(automaton, outputs, p.kind);
  } catch (const std::invalid_argument& e) {  // "mealy: the file has no Mealy outputs ..."
    throw InputError(source, "", option_name(door, "output_kind") + " " + e.what());
  }
  CompileOptions& o = p.options;
  o.strategy = strategy_from_string(r.strategy);
  o.max_len = static_cast<int>(r.max_len);
  o.onelayer.max_units = static_cast<int>(r.max_onelayer_units);
  o.onelayer.max_values = r.max_onelayer_values;
  o.attention = attention_kind_from_string(r.attention);
  o.precision = precision_from_string(r.precision);
  o.norm = norm_from_string(r.norm);
  if (r.counting != "auto") o.kr.counter_sum = counter_sum_from_string(r.counting);
  return p;
}

void certify_compiled(Network& network, const Automaton& automaton, const CompileRequest& request,
                      Door door, const std::string& source) {
  if (!request.certify) return;
  CertifyOptions options;
  options.arithmetic = request.precision == "bf16"   ? Arithmetic::BFloat16
                       : request.precision == "fp16" ? Arithmetic::Float16
                                                     : Arithmetic::Float32;
  const std::string flag = option_name(door, "certify");
  const std::string instead = " (compile without " + flag + " and check it with krc verify)";
  CertifyResult result;
  try {
    result = certify(network, automaton, options);
  } catch (const std::invalid_argument& e) {  // a network certify does not cover
    throw InputError(source, "", flag + ": " + e.what() + instead);
  }
  if (!result.certified()) {
    const CertifyRefusal& r = *result.refusal;
    const std::string where = r.layer < 0 ? "the embedding"
                              : r.layer == static_cast<int>(network.layers.size())
                                  ? "the unembedding"
                                  : "layer " + std::to_string(r.layer) + " (" + r.part + ")";
    throw InputError(source, "",
                     flag + ": the network is not certified" + (r.undecided ? " (undecided)" : "") +
                         ": " + where + ": " + r.reason + instead);
  }
  network.compiler["certified"] = result.certificate["claim"];
}

}  // namespace krc::front_door
