// Hostile weights files through the krc command (issue 9): deep metadata, missing or odd
// compiler notes, and tiny files that declare huge networks or words. Each must end in exit
// status 2 with a message naming the file and the place or the budget, with the child's peak
// memory (wait4) under the budget given, never in a crash or an exhausted machine.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "child_process.hpp"
#include "forged_weights.hpp"
#include "hostile_support.hpp"
#include "test_support.hpp"

using namespace krc;
using test::contains;

namespace {

std::string deep(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

}  // namespace

TEST_CASE(
    "hostile weights: metadata nested 100,000 deep is refused at its byte, no stack overflow") {
  test::TempDir dir;
  // The compiler notes, then an ignored member of the automaton: the bracket that opens level
  // 513 is refused (byte numbers count from 1 within the metadata value).
  test::ForgedNetwork compiler_deep;
  compiler_deep.compiler = deep(100000);
  test::ForgedNetwork automaton_deep;
  const std::string prefix =
      R"({"name":"one","states":["a"],"alphabet":["x"],"initial":"a","transitions":{"x":["a"]},"x":)";
  automaton_deep.automaton = prefix + deep(100000) + "}";
  const std::vector<std::pair<test::ForgedNetwork, std::string>> cases = {
      {compiler_deep, "__metadata__ \"compiler\" byte 513"},
      {automaton_deep,
       "__metadata__ \"automaton\" byte " + std::to_string(prefix.size() + 511 + 1)}};
  for (const auto& [network, place] : cases) {
    const std::string file =
        test::write_file(dir, "deep.safetensors", test::forged_weights(network));
    for (const std::vector<std::string>& args : {std::vector<std::string>{"info", file, "--json"},
                                                 {"info", file},
                                                 {"run", file, "x"},
                                                 {"verify", file}}) {
      const auto r = test::run_child(args);
      CAPTURE(r.err);
      CHECK(r.status == 2);
      CHECK(contains(r.err, "krc: error: " + file + ": " + place + ": "));
      CHECK(contains(r.err, "deeper than 512"));
    }
  }
}

TEST_CASE("hostile weights: krc info takes the compiler notes missing, a list, or odd") {
  test::TempDir dir;
  test::ForgedNetwork network;
  const std::string good = test::write_file(dir, "good.safetensors", test::forged_weights(network));
  auto good_run = test::run_child({"info", good});
  CHECK(good_run.status == 0);
  CHECK(contains(good_run.out, "compiled by krc 0.1.0, strategy scan,"));
  for (const std::optional<std::string>& compiler :
       {std::optional<std::string>(), std::optional<std::string>("[1, 2]"),
        std::optional<std::string>(R"({"strategy": 7, "krc_version": null})"),
        std::optional<std::string>("\"scan\""), std::optional<std::string>("null")}) {
    network.compiler = compiler;
    const std::string file =
        test::write_file(dir, "odd.safetensors", test::forged_weights(network));
    auto text = test::run_child({"info", file});
    CAPTURE(text.err);
    CHECK(text.status == 0);
    CHECK(contains(text.out, "compiled by krc ?, strategy ?,"));
    auto json = test::run_child({"info", file, "--json"});
    CHECK(json.status == 0);
    const auto parsed = nlohmann::json::parse(json.out);
    CHECK(parsed["compiler"] == (compiler ? nlohmann::json::parse(*compiler) : nlohmann::json()));
  }
}

TEST_CASE("hostile weights: a 2 KB file declaring huge heads or MLPs stops at the budget") {
  test::TempDir dir;
  const std::uint64_t budget = std::uint64_t{512} << 20;
  test::ForgedNetwork heads, mlps, long_heads;
  heads.layers = {{8, 1LL << 24, std::nullopt}};                          // 8 heads of width 2^24
  for (int i = 0; i < 16; ++i) mlps.layers.push_back({0, 0, 1LL << 24});  // 16 x 2^24 units
  long_heads.layers = {{8, 1LL << 20, std::nullopt}};  // loads, but a word needs ~1 GB
  for (const auto& [network, stage] :
       {std::pair{heads, std::string("loading ")}, std::pair{mlps, std::string("loading ")},
        std::pair{long_heads, std::string("running 1 word of up to 1 letter on 1 thread")}}) {
    const std::string bytes = test::forged_weights(network);
    CHECK(bytes.size() < 32768);
    const std::string file = test::write_file(dir, "huge.safetensors", bytes);
    const auto r = test::run_budgeted({"run", file, "x"}, budget);
    CAPTURE(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "krc: error: "));
    CHECK(contains(r.err, stage));
    CHECK(contains(r.err, "more than the memory budget (--max-memory 512 MiB)"));
    test::check_peak_under(r, budget);
  }
}

TEST_CASE("hostile weights: verify of a network with max_len 2^24 stops at the budget") {
  test::TempDir dir;
  const std::uint64_t budget = std::uint64_t{512} << 20;
  test::ForgedNetwork network;
  network.max_len = 1LL << 24;  // (max_len + 1) * d_model stays within the loader's limit
  const std::string file = test::write_file(dir, "long.safetensors", test::forged_weights(network));
  const auto r = test::run_budgeted({"verify", file}, budget);
  CAPTURE(r.err);
  CHECK(r.status == 2);
  CHECK(contains(r.err, "letters on "));
  CHECK(contains(r.err, "more than the memory budget (--max-memory 512 MiB)"));
  CHECK(contains(r.err, "--length"));
  test::check_peak_under(r, budget);
  // What it suggests works: short random words fit.
  const auto short_words = test::run_budgeted(
      {"verify", file, "--length", "64", "--random", "4", "--exhaustive", "2"}, budget);
  CHECK(short_words.status == 0);  // one state: nothing to confuse
  test::check_peak_under(short_words, budget);
}

TEST_CASE("hostile weights: a forged header length is checked before anything is read") {
  test::TempDir dir;
  namespace fs = std::filesystem;
  // A sparse 20 GB file (no disk used) whose first bytes say: a 7-byte header, then garbage.
  const std::string sparse = (dir / "sparse.safetensors").string();
  {
    std::ofstream out(sparse, std::ios::binary);
    out.write("\x07\0\0\0\0\0\0\0{\"a\":1}", 15);
  }
  fs::resize_file(sparse, std::uint64_t{20} << 30);
  auto r = test::run_budgeted({"verify", sparse}, std::uint64_t{512} << 20);
  CHECK(r.status == 2);
  CHECK(contains(r.err, sparse + ": tensor 'a': must be an object"));
  test::check_peak_under(r, std::uint64_t{64} << 20);  // plus ASan's own in that build
  // Header lengths past krc's 100 MB limit, or past the file, are refused by their number.
  for (const auto& [length, problem] :
       {std::pair{std::uint64_t{100'000'001}, std::string("larger than krc's limit of 100000000")},
        std::pair{std::uint64_t{1} << 40, std::string("larger than krc's limit")},
        std::pair{std::uint64_t{99'000'000}, std::string("larger than the rest of the file")}}) {
    std::string bytes(8, '\0');
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<char>((length >> (8 * b)) & 0xff);
    const std::string file = test::write_file(dir, "forged.safetensors", bytes + "{}");
    r = test::run_budgeted({"info", file}, std::uint64_t{512} << 20);
    CAPTURE(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, file + ": header: header length " + std::to_string(length)));
    CHECK(contains(r.err, problem));
    test::check_peak_under(r, std::uint64_t{64} << 20);  // plus ASan's own in that build
  }
}
