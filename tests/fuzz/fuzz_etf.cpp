// libFuzzer target: the LTSmin .etf reader (parse_automaton with format "etf"), read twice:
// with krc's choice of the letters' edge label, and with --etf-label naming a label taken from
// the input itself, so that the label-selection code (a label found, one missing, the
// transition groups when the file has no edge labels) is fuzzed too.
#include <string>
#include <vector>

#include "fuzz_reader.hpp"

namespace {

// The label name for the second reading: one of the input's word tokens ([A-Za-z0-9_]+, the
// characters of an ETF name), the first byte choosing which, so that a real edge label's name
// (present in the edge section) is often picked and a missing one just as often; an input with
// no word uses its first bytes as they are (any bytes, the "no edge label" message's path).
std::string label_from(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return "x";
  std::vector<std::string> words;
  std::string word;
  for (std::size_t i = 1; i <= size && words.size() < 64; ++i) {
    const char c = i < size ? static_cast<char>(data[i]) : ' ';
    const bool in_word =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (in_word && word.size() < 256) {
      word += c;
    } else if (!in_word && !word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  if (words.empty())
    return std::string(reinterpret_cast<const char*>(data), size < 8 ? size : 8) + "_";
  return words[data[0] % words.size()];
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
