// The integer-coordinate scan (README, "The constructions") through the krc command: it is
// exact in plain float32 arithmetic (tools/reference_forward.py --float32, which runs every
// tensor and every sum in float32 as a plain framework does, follows the automaton over words
// of the full max_len), and krc compile, krc info and the file's metadata name the form.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/weights_file.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {}  // namespace

TEST_CASE("reference_forward.py --float32 follows integer-coordinate scans over 1024 letters") {
  std::mt19937_64 rng(32);
  test::TempDir dir;
  for (const Automaton& automaton :
       {zoo_automaton("gridworld", 32), test::random_automaton_of_size(rng, 40, 4)}) {
    CAPTURE(automaton.name());
    CompileOptions options;
    options.strategy = Strategy::Scan;
    options.max_len = 1024;
    const CompileResult compiled = compile(automaton, options);
    REQUIRE(compiled.scan->form == ScanForm::IntegerCoordinates);
    const std::string model = (dir / (automaton.name() + ".safetensors")).string();
    test::write_file(dir, automaton.name() + ".safetensors",
                     network_to_safetensors(compiled.network));
    std::vector<std::string> lines;
    std::vector<std::vector<LetterId>> words;
    for (int w = 0; w < 2; ++w) {
      std::vector<LetterId> word(1024);
      std::string line;
      for (auto& a : word) {
        a = static_cast<LetterId>(rng() % automaton.letter_count());
        line += (line.empty() ? "" : " ") + automaton.letter_name(a);
      }
      words.push_back(word);
      lines.push_back(line);
    }
    const auto results = test::run_reference_forward(dir, model, lines, {"--float32"});
    REQUIRE(results.size() == words.size());
    for (std::size_t w = 0; w < words.size(); ++w) {
      json expected = json::array();
      for (StateId s : automaton.run(words[w])) expected.push_back(automaton.state_name(s));
      CHECK(results[w]["states"] == expected);
    }
  }
}

TEST_CASE(
    "krc compile, krc info and the file's compiler metadata name the parallel prefix's form") {
  test::TempDir dir;
  struct Case {
    std::string automaton, strategy, form;
  };
  // gridworld_9's monoid is too large for the element form; cyclic_5's (Z5) is not;
  // full_transformations_5's first level (S5 on 5 tiles, with resets) is scanned.
  for (const Case& c : {Case{"gridworld_9", "scan", "integer coordinates"},
                        Case{"cyclic_5", "scan", "element one-hot"},
                        Case{"full_transformations_5", "kr", "integer coordinates"}}) {
    CAPTURE(c.automaton);
    const auto source = test::source_dir() / "automata" / "zoo" / (c.automaton + ".json");
    const std::string model = (dir / (c.automaton + ".safetensors")).string();
    const auto compiled = test::run_krc(
        {"compile", source.string(), "-o", model, "--strategy", c.strategy, "--max-len", "64"});
    REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
    CHECK(test::contains(compiled.out, c.form));
    const auto info = test::run_krc({"info", model});
    REQUIRE(info.status == 0);
    CHECK(test::contains(info.out, "parallel prefix: " + c.form + " form, 6 steps"));
    const auto info_json = test::run_krc({"info", model, "--json"});
    REQUIRE(info_json.status == 0);
    const json compiler = json::parse(info_json.out)["compiler"];
    if (c.strategy == "scan") {
      CHECK(compiler["scan"]["form"] == c.form);
      CHECK(compiler["scan"]["steps"] == 6);
    } else {
      CHECK(compiler["cascade"]["levels"][0]["scan"]["form"] == c.form);
    }
  }
}

// The compiler accounts for the network it builds before it allocates (issue 19): a scan at
// max-len 2^20 writes gigabytes of position entries (about 3 GB before this check, 12 s), so a
// budget of 256 MiB must stop it within seconds, naming the option that lifts it, with no
// output file.
TEST_CASE(
    "krc compile: a scan at max-len 1048576 over the memory budget is refused before it builds") {
  test::TempDir dir;
  const std::string out = (dir / "out.safetensors").string();
  const auto start = std::chrono::steady_clock::now();
  auto r = test::run_krc(
      {"compile", (test::source_dir() / "automata" / "zoo" / "parity.json").string(), "--strategy",
       "scan", "--max-len", "1048576", "--max-memory", "256M", "-o", out});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CAPTURE(r.err);
  CHECK(r.status == 2);
  CHECK(test::contains(r.err, "more than the memory budget (--max-memory 256 MiB)"));
  CHECK(test::contains(r.err, "max-len 1048576"));
  CHECK(seconds < 5.0);
  CHECK_FALSE(std::filesystem::exists(out));
}

// A network krc's reader would refuse (its dense position embedding past kMaxDenseElements,
// 2^28) is stopped while the compiler grows it, within the memory budget, where it used to be
// built whole (parity at 2^20: 10.9 GB and 91 s) for the writer to refuse it last: the message
// is the compiler's, with the residual dims it had reached, and there is no output file.
TEST_CASE("compile limits: a scan past the size krc's reader accepts stops while it is built") {
  test::TempDir dir;
  const std::string out = (dir / "out.safetensors").string();
  auto r = test::run_krc(
      {"compile", (test::source_dir() / "automata" / "zoo" / "parity.json").string(), "--strategy",
       "scan", "--max-len", "1048576", "--max-memory", "8G", "-o", out});
  CAPTURE(r.err);
  CHECK(r.status == 2);
  CHECK(test::contains(r.err,
                       "the position embedding of the network being compiled (max-len "
                       "1048576, "));
  CHECK(test::contains(r.err, "would exceed the 268435456 elements krc's reader accepts"));
  CHECK_FALSE(test::contains(r.err, "krc would not read this network back"));
  CHECK_FALSE(std::filesystem::exists(out));
}

// Issue 31 through the command: the 127-state TCP server (Mealy outputs) compiled for bf16 takes
// binary coordinates at Theorem 1's width up to the factor b = 7 (d_model 2nb + the position
// codes + 1, against the one-hot form's 2n^2), certified in bf16 and fp16, and right in krc's
// bf16 arithmetic and in numpy's independent bf16 forward (tools/reference_forward.py --bf16).
TEST_CASE(
    "krc compile --precision bf16: a 127-state model takes binary coordinates, right in bf16") {
  test::TempDir dir;
  const std::string model = (dir / "tcp.safetensors").string();
  const std::string tcp = (test::source_dir() / "tests" / "reference" / "realworld" / "files" /
                           "aalpy__TCP_tcp_server_bsd_trans.dot")
                              .string();
  const auto compiled = test::run_krc(
      {"compile", tcp, "-o", model, "--precision", "bf16", "--max-len", "64", "--json"});
  REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
  const json summary = json::parse(compiled.out);
  CHECK(summary["scan"]["form"] == "binary coordinates");
  CHECK(summary["scan"]["set_size"] == 127);
  const int n = 127, b = 7, codes = 7 * (6 + 1);  // 7 bits of 0..64, for t and t - k per step
  CHECK(summary["network"]["d_model"] == 2 * n * b + codes + 1);
  CHECK(summary["scan"]["units"] == (n * n + 2 * n) * b + 1);
  CHECK(summary["precision"]["exact_in"]["bf16"] == 64);
  CHECK(summary["precision"]["exact_in"]["fp16"] == 64);
  const auto verified = test::run_krc(
      {"verify", model, "--arithmetic", "bf16", "--exhaustive", "2", "--random", "3", "--json"});
  CHECK_MESSAGE(verified.status == 0, verified.err);
  CHECK(json::parse(verified.out)["wrong_positions"] == 0);
  // The default exhaustive part keeps to half the time budget: bf16 runs every row of every
  // word, milliseconds a row here, so the 100,000 words of length 5 (11 letters) it took
  // before (many minutes) become the words of a shorter length.
  const auto defaults =
      test::run_krc({"verify", model, "--arithmetic", "bf16", "--random", "0", "--json"});
  CHECK_MESSAGE(defaults.status == 0, defaults.err);
  const json report = json::parse(defaults.out);
  CHECK(report["exhaustive"]["length"] < 5);
  CHECK(report["exhaustive"]["length"] >= 1);
  CHECK(report["wrong_positions"] == 0);
}

// The scan's planner checks the program it is about to write against the memory budget: a
// 1,000-state model in bf16 (10 M units a step) was killed by the kernel at 24 GB instead. A
// 300-state automaton's binary scan at max-len 1024 holds about 1.1 GB of entries, and its digit
// scan about 263 MiB, so a budget of 256 MiB stops it at once, naming the form that needs less
// (digit coordinates: what a larger budget would build) and the budget, with no output file.
TEST_CASE(
    "krc compile --precision bf16: a scan over the memory budget is refused first, naming the "
    "smaller form") {
  test::TempDir dir;
  std::mt19937_64 rng(300);
  const std::string file = test::write_file(
      dir, "r300.json", automaton_to_json(test::random_automaton_of_size(rng, 300, 3)).dump());
  const std::string out = (dir / "out.safetensors").string();
  const auto start = std::chrono::steady_clock::now();
  const auto r = test::run_krc({"compile", file, "--precision", "bf16", "--max-len", "1024",
                                "--max-memory", "256M", "-o", out});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CAPTURE(r.err);
  CHECK(r.status == 2);
  CHECK(test::contains(r.err, "the parallel prefix over 300 states (digit coordinates"));
  CHECK(test::contains(r.err, "more than the memory budget (--max-memory 256 MiB)"));
  CHECK(seconds < 20.0);
  CHECK_FALSE(std::filesystem::exists(out));
}
