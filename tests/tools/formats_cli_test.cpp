// The krc command on LTSmin ETF and Stamina ADL files (tests/frontend/data, sources in their
// SOURCES.md): compile, verify and run through the command line, and --etf-label. The oracles
// are the files' documented automata, traced by hand: the etf(5) man page draws
// 00 -a-> 01 -b-> 11 and 00 -b-> 10 -a-> 11; Stamina's reference automaton reads
// 0 -hello-> identified_state (accepting) -w-> 2 -o-> 3 (accepting) -r-> 4.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace krc;
using test::contains;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) {
  return (test::source_dir() / "tests" / "frontend" / "data" / name).string();
}

// Whether the network accepts each prefix of `word` (position 0: the empty word): states are
// named by their output ("accept", "accept#3"; the rejecting sink otherwise).
std::vector<bool> accepted_prefixes(const std::string& model, std::vector<std::string> word) {
  std::vector<std::string> args{"run", model, "--json"};
  args.insert(args.end(), word.begin(), word.end());
  const auto run = test::run_krc(args);
  CAPTURE(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json result = nlohmann::json::parse(run.out);
  std::vector<bool> out;
  for (const auto& s : result.at("states")) {
    const std::string name = s.get<std::string>();
    out.push_back(name.substr(0, name.rfind('#')) == "accept");
  }
  return out;
}

void compile_and_verify(const std::vector<std::string>& compile, const std::string& model) {
  auto args = compile;
  args.insert(args.end(), {"-o", model, "--max-len", "8"});
  const auto r = test::run_krc(args);
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  const auto verify = test::run_krc({"verify", model});
  CAPTURE(verify.out);
  CHECK(verify.status == 0);
  CHECK(contains(verify.out, "all right"));
}

}  // namespace

TEST_CASE("krc compile and verify an LTSmin ETF file; --etf-label") {
  test::TempDir dir;
  const std::string etf = data("etf/ltsmin_manpage_example.etf");
  const std::string model = (dir / "m.safetensors").string();
  compile_and_verify({"compile", etf}, model);
  CHECK(accepted_prefixes(model, {"a", "b"}) == std::vector<bool>{true, true, true});
  CHECK(accepted_prefixes(model, {"b", "a"}) == std::vector<bool>{true, true, true});
  CHECK(accepted_prefixes(model, {"a", "a"}) == std::vector<bool>{true, true, false});
  // Naming the file's only edge label builds the same network, byte for byte.
  const std::string named = (dir / "named.safetensors").string();
  REQUIRE(test::run_krc({"compile", etf, "--etf-label", "action", "-o", named, "--max-len", "8"})
              .status == 0);
  CHECK(test::read_text(named) == test::read_text(model));
  // A label the file lacks: exit 2, the file, the line and its labels named, nothing written.
  const std::string none = (dir / "none.safetensors").string();
  const auto wrong = test::run_krc({"compile", etf, "--etf-label", "act", "-o", none});
  CHECK(wrong.status == 2);
  CHECK(contains(wrong.err, etf + ": line 4: no edge label 'act'"));
  CHECK(contains(wrong.err, "the file's edge labels are 'action'"));
  CHECK_FALSE(fs::exists(none));
  CHECK(test::run_krc({"info", etf, "--etf-label", ""}).status != 0);
  // Not with --regex (no file to take a label from).
  CHECK(test::run_krc({"info", "--regex", "ab", "--etf-label", "x"}).status != 0);
}

TEST_CASE("krc compile and verify a Stamina ADL file") {
  test::TempDir dir;
  const std::string adl = data("adl/stamina_ref_automaton.adl");
  const std::string model = (dir / "m.safetensors").string();
  compile_and_verify({"compile", adl}, model);
  CHECK(accepted_prefixes(model, {"hello", "w", "o", "r"}) ==
        std::vector<bool>{false, true, false, true, false});
  CHECK(accepted_prefixes(model, {"w"}) == std::vector<bool>{false, false});
}
