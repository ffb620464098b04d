#include "automaton_input.hpp"

#include <iostream>

#include "krc/automata/thousands.hpp"

namespace krc::cli {

void add_automaton_input_options(CLI::App& sub, LoadOptions& load, CLI::Option* file) {
  CLI::Option* regex = sub.add_option_function<std::string>(
      "--regex", [&load](const std::string& pattern) { load.regex = pattern; },
      "A regular expression instead of a file: its minimal DFA, with acceptance as the output "
      "(full match; letters are characters or <name>; | * + ? {m,n} ( ) [abc] [^a] . \\; "
      "automata/README.md, \"Regular expressions\")");
  CLI::Option* alphabet = sub.add_option_function<std::string>(
      "--alphabet", [&load](const std::string& letters) { load.alphabet = letters; },
      "With --regex: the letters, comma-separated, in token order (default: the letters the "
      "pattern names, in order of first appearance)");
  alphabet->needs(regex);
  file->required(false);
  regex->excludes(file);
  sub.parse_complete_callback([file, regex] {
    if (file->count() == 0 && regex->count() == 0)
      throw CLI::RequiredError(file->get_name() + " (a description file, or --regex PATTERN)");
  });
  std::string extensions;
  for (const InputFormat& format : input_formats())
    for (const char* e : format.extensions)
      extensions += (extensions.empty() ? "" : ", ") + std::string(e);
  sub.add_option("--input-format", load.format,
                 "Format of the automaton file when its extension does not say: " +
                     input_format_list() + " (default: from the extension " + extensions +
                     ", else from the content; README, \"Input formats\")")
      ->check(CLI::IsMember(input_format_names()));
  sub.add_flag("--complete", load.completion.add_sink,
               "Complete a partial DFA with a sink state instead of failing (a partial "
               "acceptor, Mealy or Moore machine is completed without it, with a note: "
               "README, \"Partial DFAs\")");
  sub.add_option("--initial", load.completion.initial,
                 "The initial state, by name (overrides the file's start marker; without "
                 "either, the first state the file lists is initial)");
  sub.add_flag(
      "--no-determinise", [&load](std::int64_t) { load.completion.determinise = false; },
      "Refuse NFAs (several targets, epsilon transitions) instead of determinising "
      "them by the subset construction");
  sub.add_option("--etf-label", load.etf_label,
                 "For an LTSmin ETF file: the edge label whose values are the letters (default: "
                 "the only one, else the first whose sort or name begins with 'action', else the "
                 "first)")
      ->check(CLI::Validator(
          [](std::string& name) {
            return name.empty() ? std::string("an edge label's name, not empty") : "";
          },
          "NAME"));
  sub.add_option("--max-subset-states", load.completion.max_subset_states,
                 "Most states the subset construction of an NFA (or of --regex) may make")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  // What only a file has: refused with --regex rather than silently ignored.
  for (const char* name :
       {"--input-format", "--initial", "--no-determinise", "--complete", "--etf-label"})
    regex->excludes(sub.get_option(name));
  // What a convention decided goes to standard error, where a summary on stdout or JSON is
  // not disturbed by it.
  load.completion.note = [](const std::string& note) {
    std::cerr << "krc: note: " << note << "\n";
  };
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
