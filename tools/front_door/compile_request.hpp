#pragma once
// A compile request as both doors take it: the krc command's options and krc.compile's
// keywords are the same fields, with the same defaults and bounds, turned into the backend's
// CompileOptions and the output machine here, once. Each door parses its arguments into a
// CompileRequest, calls prepare_compile, and prints; a message about an option spells it the
// door's way (`--max-len` on the command line, `max_len` in Python).
#include <string>
#include <variant>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/automata/machine_outputs.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/network.hpp"

namespace krc::front_door {

enum class Door { CommandLine, Python };

// "max_len" as the door spells it: "--max-len" or "max_len".
std::string option_name(Door door, const std::string& keyword);

// std::invalid_argument, naming the option the door's way, unless `value` is one of `names`
// (check_member) or in [min, max] (check_range): the checks prepare_compile makes.
void check_member(Door door, const std::string& keyword, const std::string& value,
                  const std::vector<std::string>& names);
void check_range(Door door, const std::string& keyword, long long value, long long min,
                 long long max);

// The longest max-len either door accepts: the position embedding past it would not fit the
// memory a laptop has (compiler/README.md); checked before anything is allocated.
constexpr int kMaxLenLimit = 1 << 20;
// The most prefix values the onelayer planner may be asked to enumerate (2^22, 32 times the
// default): its time and memory grow with the limit. Measured (Release, one core): at this
// bound flipflop_2 at max-len 1024 plans in 2.8 s; at 2^24 parity at max-len 8 took 43 s and
// 570 MB, and at 2^31 - 1 flipflop_2 ran past a minute and 2 GB. Checked before planning, in
// both doors.
constexpr long long kMaxOneLayerValuesLimit = 1LL << 22;

struct CompileRequest {
  std::string strategy = "auto";
  std::string attention = "softmax";
  std::string precision = "fp32";
  std::string norm = "none";
  std::string counting = "auto";  // kr's counter sums; "auto" keeps the planner's choice
  std::string output_kind;        // empty: what the file carries (default_output)
  long long max_len = 1024;
  long long max_onelayer_units = OneLayerOptions{}.max_units;
  long long max_onelayer_values = OneLayerOptions{}.max_values;
  bool certify = false;  // prove the network before it is handed out (certify_compiled)
};

// One option of a compile request, as both doors name it: its keyword (krc.compile's; the
// command line's flag is option_name's spelling), the field it sets, and what it admits: one
// of `names` (`optional`: or empty, meaning the file's default), a number in [min, max], or a
// flag (a bool field). prepare_compile checks every field through this table, and the Python
// tests take their option list from it (krc._core.compile_request_options), so an option added
// here is one the tests that compare the two doors must name.
struct RequestOption {
  std::string keyword;
  std::variant<std::string CompileRequest::*, long long CompileRequest::*, bool CompileRequest::*>
      field;
  std::vector<std::string> names;
  long long min = 0, max = 0;
  bool optional = false;
};
const std::vector<RequestOption>& compile_request_options();
// The option of that keyword (std::logic_error if none: a door asked for one the table lacks).
const RequestOption& request_option(const std::string& keyword);

// What the request compiles: the output machine (its automaton is what the network computes)
// and the backend's options (progress left to the door).
struct PreparedCompile {
  OutputKind kind = OutputKind::State;
  OutputMachine machine;
  CompileOptions options;
};

// Checks every field against the name tables and the bounds (std::invalid_argument naming the
// field the door's way; the command line's own checks meet the same bounds first) and builds
// the output machine of `automaton` (InputError naming `source` where the output kind is not
// in the file).
PreparedCompile prepare_compile(const Automaton& automaton, const MachineOutputs& outputs,
                                const CompileRequest& request, Door door,
                                const std::string& source);

// Compiles what prepare_compile prepared. compile's refusals (LimitError) name `source` ahead
// of their own message, as every other refusal of either door does: the command line's input
// file, Python's automaton; an empty `source` (a --regex pattern, whose automaton the message
// names already) leaves the message as it is.
CompileResult compile_prepared(const PreparedCompile& prepared, const std::string& source);

// A message from the libraries, spelt for the door: for Door::Python the flags it names
// (`--strategy scan`) become Python's keywords (`strategy scan`), a quoted command
// ("`krc compile --norm layernorm`") the call ("`krc.compile(norm=\"layernorm\")`"), and a
// flag with its own Python aside ("--allow-inexact (Python: allow_inexact=True)") the aside.
// The Python bindings spell every exception's message through it (bindings/errors.cpp); the
// command line's messages are left as they are.
std::string spelt_for(Door door, const std::string& message);

// `--certify` / certify=True: proves the compiled network as `krc certify` does (every word up
// to max-len, in the arithmetic its precision names: fp32 -> float32, bf16, fp16; rule auto)
// and records the claim in its compiler metadata ("certified"), which `krc info` shows. Where
// certify refuses, or does not cover the network, throws InputError naming `source` with
// certify's message: the door writes nothing.
void certify_compiled(Network& network, const Automaton& automaton, const CompileRequest& request,
                      Door door, const std::string& source);

}  // namespace krc::front_door
