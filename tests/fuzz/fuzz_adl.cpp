// libFuzzer target: the Stamina ADL reader (parse_automaton with format "adl").
#include "fuzz_reader.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  krc::fuzz::set_fuzz_budget();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return krc::fuzz::read_description(data, size, "adl");
}
