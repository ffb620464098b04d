// libFuzzer target: a description of no named format (parse_automaton with format ""): the
// content decides, foreign formats are refused by name, gzip input is decompressed under the
// cap (its seeds hold gzip streams, so mutations reach zlib and the reader behind it).
#include "fuzz_reader.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  krc::fuzz::set_fuzz_budget();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return krc::fuzz::read_description(data, size, "");
}
