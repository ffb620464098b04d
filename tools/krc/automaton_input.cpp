#include "automaton_input.hpp"

#include "krc/verifier.hpp"

namespace krc::cli {

void add_automaton_input_options(CLI::App& sub, LoadOptions& load) {
  sub.add_option("--input-format", load.format,
                 "Format of the automaton file when its extension does not say (default: from "
                 "the extension .json, .dot/.gv, .jff, else from the content)")
      ->check(CLI::IsMember({"json", "dot", "jff"}));
  sub.add_flag("--complete", load.completion.add_sink,
               "Complete a partial DFA with a sink state instead of failing");
  sub.add_option("--initial", load.completion.initial,
                 "The initial state, by name (for files without a start marker, such as many "
                 "benchmark Mealy machines; overrides the file's)");
}

void refuse_format_option(CLI::App& sub) {
  sub.add_option("--format")
      ->group("")  // hidden from --help
      ->check([](const std::string&) {
        return std::string(
            "--format is the output format of krc decompose; the format of an automaton file "
            "is --input-format");
      });
}

std::string decompose_limit_hint(const DecomposeLimitError& e) {
  using Limit = DecomposeLimitError::Limit;
  const std::string value = with_thousands(static_cast<long long>(e.value()));
  switch (e.limit()) {
    case Limit::MaxImages:
      return "--max-images (now " + value + ") raises the limit";
    case Limit::MaxImageBytes:
      return "--max-image-memory (now " + with_thousands(static_cast<long long>(e.value() >> 20)) +
             " MiB) raises the limit";
    case Limit::MaxTuples:
      return "--max-tuples (now " + value +
             ") raises the limit; --no-tables skips the action tables";
    case Limit::MaxTableCells:
      return "--max-table-cells (now " + value +
             ") raises the limit; --no-tables skips the action tables";
  }
  return "";
}

}  // namespace krc::cli
