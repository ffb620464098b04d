// libFuzzer target: the LTSmin .etf reader (parse_automaton with format "etf"), read twice:
// with krc's choice of the letters' edge label, and with --etf-label naming a label taken from
// the input itself, so that the label-selection code (a label found, one missing, the
// transition groups when the file has no edge labels) is fuzzed too.
#include <string>
#include <vector>

#include "fuzz_reader.hpp"

namespace {

// The word tokens ([A-Za-z0-9_]+, the characters of an ETF name) of text[from, to), at most 64.
std::vector<std::string> words_in(const std::string& text, std::size_t from, std::size_t to) {
  std::vector<std::string> words;
  std::string word;
  for (std::size_t i = from; i <= to && words.size() < 64; ++i) {
    const char c = i < to ? text[i] : ' ';
    const bool in_word =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (in_word && word.size() < 256) {
      word += c;
    } else if (!in_word && !word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  return words;
}

// The label name for the second reading, the first byte choosing it: three times in four one
// of the words of the edge section ("begin edge" to "end edge": the labels' names and sorts,
// so a real label is often found), else one of the whole input's words (mostly missing
// labels); an input with no word uses its first bytes as they are (any bytes, the "no edge
// label" message's path).
std::string label_from(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return "x";
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words;
  const auto begin = text.find("begin edge");
  if (data[0] % 4 != 0 && begin != std::string::npos) {
    const auto end = text.find("end edge", begin);
    words = words_in(text, begin + 10, end == std::string::npos ? size : end);
  }
  if (words.empty()) words = words_in(text, 1, size);
  if (words.empty()) return text.substr(0, 8) + "_";
  return words[data[0] / 4 % words.size()];
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  krc::fuzz::set_fuzz_budget();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  krc::fuzz::read_description(data, size, "etf");
  return krc::fuzz::read_description(data, size, "etf", label_from(data, size));
}
