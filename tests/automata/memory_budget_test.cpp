// The shared basics for hostile input (issue 9): the memory budget and its sizes, the JSON
// nesting bound, and reads that never trust a file's size.
#include "krc/automata/memory_budget.hpp"

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include "krc/automata/bounded_read.hpp"
#include "krc/automata/failed_phase.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/json_depth.hpp"
#include "test_support.hpp"

using namespace krc;
namespace fs = std::filesystem;

namespace {

// Sets the budget for one scope.
class BudgetScope {
 public:
  explicit BudgetScope(std::uint64_t bytes) : previous_(memory_budget()) {
    set_memory_budget(bytes);
  }
  ~BudgetScope() { set_memory_budget(previous_); }

 private:
  std::uint64_t previous_;
};

std::string limit_message(const std::string& what, std::uint64_t bytes) {
  try {
    check_memory(what, bytes);
  } catch (const LimitError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("memory budget: sizes are read and printed in binary units") {
  const std::uint64_t K = 1024, M = K * K, G = K * M;
  CHECK(parse_byte_size("4096") == 4096);
  CHECK(parse_byte_size("1k") == K);
  CHECK(parse_byte_size("512M") == 512 * M);
  CHECK(parse_byte_size("512MB") == 512 * M);
  CHECK(parse_byte_size("2G") == 2 * G);
  CHECK(parse_byte_size("1.5GiB") == 3 * G / 2);
  CHECK(parse_byte_size("1 T") == K * G);
  for (const char* bad :
       {"", "0", "-1", "x", "12X", "1e9", "0x10", "inf", "nan", "5 MiBs", "20000000T"})
    CHECK_FALSE(parse_byte_size(bad).has_value());
  CHECK(byte_size_text(1) == "1 byte");
  CHECK(byte_size_text(1023) == "1023 bytes");
  CHECK(byte_size_text(K) == "1.00 KiB");
  CHECK(byte_size_text(3 * K / 2) == "1.50 KiB");
  CHECK(byte_size_text(512 * M) == "512 MiB");
  CHECK(byte_size_text(20 * G) == "20.0 GiB");
}

TEST_CASE("memory budget: check_memory names the stage, the need and the option") {
  BudgetScope scope(1000);
  CHECK(limit_message("the tables", 1000).empty());
  CHECK(limit_message("the tables", 1001) ==
        "the tables needs about 1001 bytes, more than the memory budget (--max-memory 1000 "
        "bytes)");
  CHECK(limit_message("x", UINT64_MAX) ==
        "x needs more than 16 EiB, more than the memory budget (--max-memory 1000 bytes)");
  CHECK(saturating_mul(UINT64_MAX / 2, 3) == UINT64_MAX);
  CHECK(saturating_add(UINT64_MAX - 1, 2) == UINT64_MAX);
  CHECK(saturating_mul(1 << 20, 1 << 20) == std::uint64_t{1} << 40);
}

// Issue 31: a refusal names the phase under way, and a failure no estimate foresaw (a
// std::bad_alloc, caught after every phase has been unwound) still finds the phase it left.
TEST_CASE("memory budget: check_memory and a failure name the phase under way") {
  BudgetScope scope(1000);
  {
    const MemoryPhase outer("reading f.json");
    CHECK(limit_message("the tables", 1001) ==
          "reading f.json: the tables needs about 1001 bytes, more than the memory budget "
          "(--max-memory 1000 bytes)");
    try {
      const MemoryPhase inner("minimising");
      throw std::bad_alloc();
    } catch (const std::bad_alloc&) {
      CHECK(failed_phase() == "reading f.json");  // the outer phase is still under way
    }
  }
  try {
    const MemoryPhase outer("decomposing (holonomy)");
    const MemoryPhase inner("the tables");
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    CHECK(failed_phase() == "the tables");  // the innermost phase the exception left
  }
  { const MemoryPhase done("verifying"); }  // a phase that ends normally clears the record
  CHECK(failed_phase().empty());
  CHECK(limit_message("the tables", 1001).rfind("the tables needs", 0) == 0);
}

TEST_CASE("memory budget: the default is half the machine, within an address-space limit") {
  const std::uint64_t physical = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                 static_cast<std::uint64_t>(sysconf(_SC_PAGE_SIZE));
  CHECK(default_memory_budget() <= physical / 2);
  CHECK(default_memory_budget() > 0);
  // Under an address-space limit 1 GiB above what the process has mapped (prlimit --as; in a
  // child, so that this process keeps its limits), at most 3/4 of the limit.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::uint64_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const std::uint64_t limit_bytes =
        pages * static_cast<std::uint64_t>(sysconf(_SC_PAGE_SIZE)) + (std::uint64_t{1} << 30);
    rlimit limit{limit_bytes, limit_bytes};
    setrlimit(RLIMIT_AS, &limit);
    _exit(default_memory_budget() <= limit_bytes / 4 * 3 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("json depth: the bracket that opens one level too many, strings aside") {
  CHECK(json_too_deep("[[[]]]", 2) == 2u);
  CHECK_FALSE(json_too_deep("[[[]]]", 3).has_value());
  CHECK(json_too_deep(R"({"a":[{"b":[1]}]})", 3) == 11u);
  CHECK_FALSE(json_too_deep(R"(["[[[[", "{{{{"])", 1).has_value());  // inside strings
  CHECK_FALSE(json_too_deep(R"(["\"[[[", 1])", 1).has_value());      // an escaped quote
  CHECK(json_too_deep(R"(["\\", [1]])", 1) == 7u);  // an escaped backslash ends nothing
  CHECK(json_too_deep("]]]][[", 1) == 5u);          // stray closers do not go below zero
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  CHECK(json_too_deep(deep) == static_cast<std::size_t>(kMaxJsonDepth));
  CHECK(json_depth_problem(7) == "JSON nested deeper than 7 levels (krc's limit)");
}

TEST_CASE("bounded read: a file's size is checked first, a stream is cut at the cap") {
  test::TempDir dir;
  const ReadLimit limit{10, "the test allows", true};
  const std::string small = test::write_file(dir, "small.txt", "0123456789");
  CHECK(read_bounded(small, limit) == "0123456789");
  // A sparse terabyte: refused by its size, so this returns at once.
  const std::string huge = (dir / "huge.txt").string();
  std::ofstream(huge) << "x";
  fs::resize_file(huge, std::uint64_t{1} << 40);
  try {
    read_bounded(huge, limit);
    FAIL("a terabyte was read");
  } catch (const LimitError& e) {
    CHECK(std::string(e.what()) == huge + ": 1.00 TiB, more than the 10 bytes the test allows");
  }
  std::istringstream eleven("01234567890");
  CHECK_THROWS_AS(read_bounded(eleven, "stream", limit), LimitError);
  std::istringstream ten("0123456789");
  CHECK(read_bounded(ten, "stream", limit) == "0123456789");
  // Text has no NUL byte: the read stops at its line.
  std::istringstream binary(std::string("a\nb\nc\0d", 7));
  try {
    read_bounded(binary, "bin", limit);
    FAIL("a NUL byte was read as text");
  } catch (const InputError& e) {
    CHECK(e.file() == "bin");
    CHECK(e.place() == "line 3");
    CHECK(e.problem().find("a NUL byte (at byte 5)") == 0);
  }
  std::istringstream bytes(std::string("a\0b", 3));
  CHECK(read_bounded(bytes, "bin", ReadLimit{10, "", false}).size() == 3);
  CHECK_THROWS_AS(read_bounded(dir.path().string(), limit), InputError);
  CHECK_THROWS_AS(read_bounded((dir / "missing").string(), limit), InputError);
  // read_exactly: a stream shorter than it claims costs what it has, and is named.
  std::istringstream short_stream("abc");
  std::string out;
  try {
    read_exactly(short_stream, 10, out, "f", "tensor 'w'");
    FAIL("a short stream was accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "f: tensor 'w': the file ends after 3 of 10 bytes");
  }
}
