#pragma once
// Reading description files: krc's native JSON, Graphviz DOT as AALpy, LearnLib/AutomataLib,
// FlexFringe and the Automata Wiki write it, and JFLAP .jff 4-8 (see README, "Input formats").
// Every problem is an InputError naming the file, the place (line and column, line, or JSON
// pointer) and what is wrong; a weights file is refused as one, and a format krc does not read
// (Abbadingo's samples) by its name; FlexFringe's JSON output reads as JSON; Stamina's ADL, RABIT,
// GOAL, TAF, FSM, mata's VTF and LTSmin's ETF have their readers (ba_reader.hpp, ...). gzip
// input of any format is decompressed under the same cap as plain text.
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

struct LoadOptions {
  // add_sink: complete a partial DFA with a sink state (--complete); initial: the initial
  // state by name (--initial), for files without a start marker or to override theirs.
  CompletionOptions completion;
  std::string format;  // "" or a name of input_formats() (--input-format); "" = extension,
                       // else content
  // --regex PATTERN: the automaton is the pattern's minimal DFA (regex_reader.hpp) and the
  // path is not read; --alphabet: its letters, comma-separated (nullopt: the pattern's own).
  std::optional<std::string> regex = std::nullopt, alphabet = std::nullopt;
  // --etf-label NAME: the ETF edge label whose values are the letters (etf_reader.hpp); "" =
  // krc's choice. Naming one for a file of another format is an error.
  std::string etf_label = {};
};

// Reads `path` ("-" = standard input). The format comes from options.format, else the
// extension (.json; .dot or .gv; .jff; .hoa), else the content (its first character or keyword).
// The automaton is named after the file's stem unless the file names it (JSON "name").
// With options.regex, the pattern's minimal DFA instead (an acceptor: outputs->acceptor).
Automaton load_automaton(const std::string& path, const LoadOptions& options = {});

// The same, from text already in memory; `file` names it in messages and gives the default
// name. format "" means: from file's extension, else sniffed from the text.
Automaton parse_automaton(const std::string& text, const std::string& file,
                          const LoadOptions& options = {});

// The input formats krc reads, one table: --input-format's choices, the Python keyword
// input_format, the extensions that name each, and the words of the "cannot tell" message.
struct InputFormat {
  const char* name;                     // "json": the --input-format value
  std::vector<const char*> extensions;  // ".json" (lower case; ".gz" above one is looked through)
  const char* description;              // "native JSON (and FlexFringe's JSON output)"
};
const std::vector<InputFormat>& input_formats();
std::vector<std::string> input_format_names();
// "json, dot, jff, hoa, aut, ba, gff, taf, fsm, vtf, etf and adl".
std::string input_format_list();

// "json", "dot", "jff", "hoa", ... for the text of `file`, or "" when neither the extension nor the
// content tells.
std::string detect_format(const std::string& file, const std::string& text);

}  // namespace krc
