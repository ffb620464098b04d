#include "krc/frontend/load_automaton.hpp"

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <sstream>

#include "foreign_formats.hpp"
#include "gzip_input.hpp"
#include "krc/automata/bounded_read.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/frontend/adl_reader.hpp"
#include "krc/frontend/aut_reader.hpp"
#include "krc/frontend/ba_reader.hpp"
#include "krc/frontend/dot_reader.hpp"
#include "krc/frontend/etf_reader.hpp"
#include "krc/frontend/fsm_reader.hpp"
#include "krc/frontend/gff_reader.hpp"
#include "krc/frontend/hoa_reader.hpp"
#include "krc/frontend/jflap_reader.hpp"
#include "krc/frontend/json_reader.hpp"
#include "krc/frontend/regex_reader.hpp"
#include "krc/frontend/taf_reader.hpp"
#include "krc/frontend/vtf_reader.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

std::string format_from_extension(const std::string& file) {
  std::filesystem::path path(file);
  // "model.dot.gz": the extension under ".gz" names the format of the compressed text.
  if (frontend::lowercase(path.extension().string()) == ".gz") path = path.stem();
  const std::string extension = frontend::lowercase(path.extension().string());
  for (const InputFormat& format : input_formats())
    for (const char* e : format.extensions)
      if (extension == e) return format.name;
  return "";
}

std::string format_from_content(const std::string& text) {
  std::size_t i = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 byte order mark
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return "";
  // RABIT's "[0]" would read as JSON, GOAL's XML as JFLAP's: these first.
  if (std::string format = frontend::sniff_read_format(text.substr(i)); !format.empty())
    return format;
  char c = text[i];
  if (c == '{' || c == '[') return "json";
  if (c == '<') return "jff";
  if (text.compare(i, 4, "HOA:") == 0) return "hoa";
  if (text.compare(i, 2, "//") == 0 || text.compare(i, 2, "/*") == 0 || c == '#') return "dot";
  std::size_t end = i;
  while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
  std::string word = frontend::lowercase(text.substr(i, end - i));
  if (word == "digraph" || word == "graph" || word == "strict") return "dot";
  if (word == "des" && end < text.size() && (text[end] == '(' || text[end] == ' ')) return "aut";
  return "";
}

// A safetensors file: an 8-byte little-endian header length that fits in the file, then the
// header's '{'. No text file looks like this (its eighth byte would make the length >= 2^56).
bool looks_like_weights(const std::string& text) {
  if (text.size() < 9 || text[8] != '{') return false;
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = length << 8 | static_cast<unsigned char>(text[i]);
  return length >= 2 && length <= text.size() - 8;
}

// A description's text may take the budget divided by this: parsing costs about that many
// bytes per byte of text at most (nlohmann's document, the builder's maps; measured on long
// state lists in all three formats), and a file that cannot be parsed within the budget is
// not worth reading.
constexpr std::uint64_t kParseBytesPerTextByte = 32;

ReadLimit description_limit() {
  const std::uint64_t budget = memory_budget();
  return {budget / kParseBytesPerTextByte,
          "a description file may have (1/" + std::to_string(kParseBytesPerTextByte) +
              " of the memory budget, --max-memory " + byte_size_text(budget) +
              ": parsing takes up to " + std::to_string(kParseBytesPerTextByte) +
              " bytes per byte of text)",
          true};
}

}  // namespace

const std::vector<InputFormat>& input_formats() {
  static const std::vector<InputFormat> formats{
      {"json", {".json"}, "native JSON ('{', and FlexFringe's JSON output)"},
      {"dot", {".dot", ".gv"}, "Graphviz DOT ('digraph')"},
      {"jff", {".jff"}, "JFLAP XML ('<structure>')"},
      {"hoa", {".hoa"}, "HOA ('HOA:')"},
      {"aut", {".aut"}, "Aldebaran ('des (')"},
      {"ba", {".ba"}, "RABIT BA ('[init]', 'a,[p]->[q]')"},
      {"gff", {".gff"}, "GOAL GFF ('<structure type=\"fa\">')"},
      {"taf", {".taf"}, "AutomataLib TAF ('dfa {...} {')"},
      {"fsm", {".fsm"}, "mCRL2/LTSmin FSM ('---' sections)"},
      {"vtf", {".vtf", ".mata"}, "mata VTF ('@NFA-explicit')"},
      {"etf", {".etf"}, "LTSmin ETF ('begin state')"},
      {"adl", {".adl"}, "Stamina ADL ('5 6', then '0 true false')"},
  };
  return formats;
}

std::vector<std::string> input_format_names() {
  std::vector<std::string> names;
  for (const InputFormat& format : input_formats()) names.emplace_back(format.name);
  return names;
}

std::string input_format_list() {
  const auto names = input_format_names();
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return list;
}

std::string detect_format(const std::string& file, const std::string& text) {
  std::string format = format_from_extension(file);
  return format.empty() ? format_from_content(text) : format;
}

Automaton parse_automaton(const std::string& text, const std::string& file,
                          const LoadOptions& options) {
  std::string format = frontend::lowercase(options.format);
  if (format == "gv") format = "dot";
  if (format.empty()) format = detect_format(file, text);
  // ADL, RABIT, GOAL, TAF, FSM, VTF and ETF files are what their content says, whatever the
  // extension (GOAL's XML saved as .jff would otherwise be "a JFLAP file without a finite
  // automaton").
  if (options.format.empty())
    if (std::string sniffed = frontend::sniff_read_format(text); !sniffed.empty()) format = sniffed;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(file, "", "the file is empty");
  if (frontend::is_gzip(text)) {
    std::string plain = frontend::gunzip(text, file, description_limit());
    if (frontend::is_gzip(plain))
      throw InputError(file, "", "a gzip stream inside a gzip stream: krc decompresses one layer");
    return parse_automaton(plain, file, options);
  }
  // A UTF-8 byte order mark (Windows editors write one) is not part of any of the formats.
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    LoadOptions rest = options;
    rest.format = format;
    return parse_automaton(text.substr(3), file, rest);
  }
  bool standard_input = file == "-" || file == "<stdin>" || file.empty();
  // A file name need not be UTF-8, but the automaton's name must be (it goes into JSON).
  std::filesystem::path path(file);
  if (frontend::lowercase(path.extension().string()) == ".gz") path = path.stem();  // x.dot.gz
  std::string name =
      standard_input ? "stdin" : frontend::replace_invalid_utf8(path.stem().string());
  // A format krc does not read is named, whatever the extension says, unless asked for.
  if (options.format.empty())
    if (auto foreign = frontend::foreign_format(text))
      throw InputError(file, "", frontend::foreign_format_problem(*foreign));
  // --etf-label means an ETF file: said rather than ignored for any other.
  if (!options.etf_label.empty() && !format.empty() && format != "etf")
    throw InputError(file, "",
                     "--etf-label names an edge label of an LTSmin ETF file; this file is read "
                     "as " +
                         format);
  try {
    // FlexFringe's JSON output (members "nodes" and "edges") is read there too.
    if (format == "json") return read_json_automaton(text, file, name, options.completion);
    if (format == "dot") return read_dot_automaton(text, file, name, options.completion);
    if (format == "jff") return read_jflap_automaton(text, file, name, options.completion);
    if (format == "hoa") return read_hoa_automaton(text, file, name, options.completion);
    if (format == "aut") return read_aut_automaton(text, file, name, options.completion);
    if (format == "ba") return read_ba_automaton(text, file, name, options.completion);
    if (format == "gff") return read_gff_automaton(text, file, name, options.completion);
    if (format == "taf") return read_taf_automaton(text, file, name, options.completion);
    if (format == "fsm") return read_fsm_automaton(text, file, name, options.completion);
    if (format == "vtf") return read_vtf_automaton(text, file, name, options.completion);
    if (format == "etf")
      return read_etf_automaton(text, file, name, options.completion, options.etf_label);
    if (format == "adl") return read_adl_automaton(text, file, name, options.completion);
  } catch (const InputError&) {
    throw;
  } catch (const LimitError&) {  // the subset construction's bound: the option that lifts it
    throw;
  } catch (const std::exception& e) {
    // The readers check what they know to check; anything a library still rejects is bad
    // input too, and must not end krc as an internal error.
    throw InputError(file, "", std::string("cannot read the automaton: ") + e.what());
  }
  if (!options.format.empty())
    throw InputError(
        file, "",
        "unknown format '" + options.format + "' (krc reads " + input_format_list() + ")");
  if (looks_like_weights(text))
    throw InputError(file, "",
                     "this is a weights file (safetensors), not an automaton description; "
                     "krc info, verify and run read weights files");
  std::string expected, extensions;
  for (const InputFormat& f : input_formats()) {
    expected += (expected.empty() ? "" : ", ") + std::string(f.description);
    for (const char* e : f.extensions)
      extensions += (extensions.empty() ? "" : " ") + std::string(e);
  }
  throw InputError(file, "line 1",
                   "cannot tell the format: expected " + expected +
                       "; name it with an extension (" + extensions + ") or --input-format");
}

Automaton load_automaton(const std::string& path, const LoadOptions& options) {
  if (options.regex) {
    RegexOptions regex;
    if (options.alphabet) regex.alphabet = parse_alphabet_list(*options.alphabet);
    regex.max_subset_states = options.completion.max_subset_states;
    const MemoryPhase phase("reading the regular expression");
    Automaton automaton = regex_automaton(*options.regex, regex);
    if (options.completion.outputs) {
      *options.completion.outputs = {};
      options.completion.outputs->acceptor = true;
    }
    return automaton;
  }
  Automaton automaton = [&] {
    const MemoryPhase phase("reading " + std::string(path == "-" ? "<stdin>" : path));
    const std::string text = read_bounded(path, description_limit());
    return parse_automaton(text, path == "-" ? "<stdin>" : path, options);
  }();
  release_free_memory();  // the parser's document and maps: many small nodes, now freed
  return automaton;
}

}  // namespace krc
