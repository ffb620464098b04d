#include "compile_request.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <type_traits>

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

CompileResult compile_prepared(const PreparedCompile& prepared, const std::string& source) {
  try {
    return compile(prepared.machine.automaton, prepared.options);
  } catch (const LimitError& e) {
    if (source.empty()) throw;
    throw LimitError(source + ": " + e.what());
  }
}

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Whether message[i] starts a flag: "--" and a lower-case letter, not inside a word or a
// path ("/tmp/--x.json" stays as it is).
bool flag_at(const std::string& message, std::size_t i) {
  return message.compare(i, 2, "--") == 0 && i + 2 < message.size() &&
         std::islower(static_cast<unsigned char>(message[i + 2])) &&
         (i == 0 || !(is_word_char(message[i - 1]) ||
                      std::string_view("/._-").find(message[i - 1]) != std::string_view::npos));
}

// The end of the flag starting at `i` ("--max-len": past the "n"), hyphens inside it kept.
std::size_t flag_end(const std::string& message, std::size_t i) {
  std::size_t j = i + 2;
  while (j < message.size() &&
         (is_word_char(message[j]) ||
          (message[j] == '-' && j + 1 < message.size() && is_word_char(message[j + 1]))))
    ++j;
  return j;
}

std::string keyword_of(const std::string& message, std::size_t begin, std::size_t end) {
  std::string keyword = message.substr(begin + 2, end - begin - 2);
  std::replace(keyword.begin(), keyword.end(), '-', '_');
  return keyword;
}

}  // namespace

std::string spelt_for(Door door, const std::string& message) {
  if (door == Door::CommandLine) return message;
  static const std::string python_aside = " (Python: ";
  std::string out;
  for (std::size_t i = 0; i < message.size();) {
    // "`krc compile --norm layernorm`": the command quoted whole becomes the call,
    // "`krc.compile(norm=\"layernorm\")`".
    if (message.compare(i, 5, "`krc ") == 0) {
      const std::size_t command = i + 5;
      std::size_t space = command;
      while (space < message.size() && std::islower(static_cast<unsigned char>(message[space])))
        ++space;
      if (space > command && message.compare(space, 1, " ") == 0 && flag_at(message, space + 1)) {
        const std::size_t end = flag_end(message, space + 1);
        const std::size_t close = message.find('`', end);
        const std::string value =
            close == std::string::npos || end >= close ? "" : message.substr(end, close - end);
        if (close != std::string::npos &&
            (value.empty() || (value[0] == ' ' && value.find(' ', 1) == std::string::npos))) {
          out += "`krc." + message.substr(command, space - command) + "(" +
                 keyword_of(message, space + 1, end) +
                 (value.empty() ? "=True" : "=\"" + value.substr(1) + "\"") + ")`";
          i = close + 1;
          continue;
        }
      }
    }
    if (!flag_at(message, i)) {
      out += message[i++];
      continue;
    }
    const std::size_t end = flag_end(message, i);
    // "--allow-inexact (Python: allow_inexact=True)": the message's own Python spelling.
    if (message.compare(end, python_aside.size(), python_aside) == 0) {
      const std::size_t close = message.find(')', end);
      if (close != std::string::npos) {
        const std::size_t begin = end + python_aside.size();
        out += message.substr(begin, close - begin);
        i = close + 1;
        continue;
      }
    }
    out += keyword_of(message, i, end);
    i = end;
  }
  return out;
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
