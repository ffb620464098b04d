#include "compile_request.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <typeinfo>

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

const std::vector<RequestOption>& compile_request_options() {
  static const std::vector<RequestOption> options = [] {
    std::vector<std::string> countings = counter_sum_names();
    countings.insert(countings.begin(), "auto");
    const long long int_max = std::numeric_limits<int>::max();
    using R = CompileRequest;
    return std::vector<RequestOption>{
        {"strategy", &R::strategy, strategy_names()},
        {"attention",
         &R::attention,
         {to_string(AttentionKind::Softmax), to_string(AttentionKind::Hard)}},
        {"precision", &R::precision, precision_names()},
        {"norm", &R::norm, norm_names()},
        {"counting", &R::counting, countings},
        {"output_kind", &R::output_kind, output_kind_names(), 0, 0, true},
        {"max_len", &R::max_len, {}, 1, kMaxLenLimit},
        {"max_onelayer_units", &R::max_onelayer_units, {}, 1, int_max},
        {"max_onelayer_values", &R::max_onelayer_values, {}, 1, kMaxOneLayerValuesLimit},
        {"certify", &R::certify, {}},
    };
  }();
  return options;
}

const RequestOption& request_option(const std::string& keyword) {
  for (const RequestOption& option : compile_request_options())
    if (option.keyword == keyword) return option;
  throw std::logic_error("no compile option " + keyword);
}

PreparedCompile prepare_compile(const Automaton& automaton, const MachineOutputs& outputs,
                                const CompileRequest& r, Door door, const std::string& source) {
  for (const RequestOption& option : compile_request_options()) {
    std::visit(
        [&](auto field) {
          const auto& value = r.*field;
          using Value = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<Value, std::string>) {
            if (!(option.optional && value.empty()))
              check_member(door, option.keyword, value, option.names);
          } else if constexpr (std::is_same_v<Value, long long>) {
            check_range(door, option.keyword, value, option.min, option.max);
          }
        },
        option.field);
  }

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

std::string spelt_for(Door door, const std::string& message) {
  if (door == Door::CommandLine) return message;
  std::string out;
  for (std::size_t i = 0; i < message.size(); ++i) {
    const bool flag = message.compare(i, 2, "--") == 0 && i + 2 < message.size() &&
                      std::islower(static_cast<unsigned char>(message[i + 2])) &&
                      (i == 0 || !std::isalnum(static_cast<unsigned char>(message[i - 1])));
    if (!flag) {
      out += message[i];
      continue;
    }
    for (i += 2; i < message.size() && (std::isalnum(static_cast<unsigned char>(message[i])) ||
                                        (message[i] == '-' && i + 1 < message.size() &&
                                         std::isalnum(static_cast<unsigned char>(message[i + 1]))));
         ++i)
      out += message[i] == '-' ? '_' : message[i];
    --i;
  }
  return out;
}

CompileResult compile_prepared(const PreparedCompile& prepared, Door door) {
  try {
    return compile(prepared.machine.automaton, prepared.options);
  } catch (const LimitError& e) {
    // Subclasses carry fields of their own (the option, the phase): they pass as they are.
    if (door == Door::CommandLine || typeid(e) != typeid(LimitError)) throw;
    throw LimitError(spelt_for(door, e.what()));
  } catch (const std::invalid_argument& e) {
    if (door == Door::CommandLine) throw;
    throw std::invalid_argument(spelt_for(door, e.what()));
  }
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
    throw InputError(source, "", flag + ": " + spelt_for(door, e.what()) + instead);
  }
  if (!result.certified()) {
    const CertifyRefusal& r = *result.refusal;
    const std::string where = r.layer < 0 ? "the embedding"
                              : r.layer == static_cast<int>(network.layers.size())
                                  ? "the unembedding"
                                  : "layer " + std::to_string(r.layer) + " (" + r.part + ")";
    throw InputError(source, "",
                     flag + ": the network is not certified" + (r.undecided ? " (undecided)" : "") +
                         ": " + where + ": " + spelt_for(door, r.reason) + instead);
  }
  network.compiler["certified"] = result.certificate["claim"];
}

}  // namespace krc::front_door
