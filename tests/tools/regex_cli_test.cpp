// `--regex PATTERN --alphabet LIST` in place of a description file, on every command that reads
// an automaton (compile, decompose, info): the whole path from a pattern to a verified network,
// its answers checked against the pattern's language written out here, and the refusals.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

using krc::test::contains;
using krc::test::run_krc;

namespace {

// A state named "accept" or "accept#k" accepts.
bool accepting(const std::string& state) { return state.substr(0, state.rfind('#')) == "accept"; }

}  // namespace

TEST_CASE("krc compile --regex: the minimal DFA, acceptance as the output, verified and run") {
  krc::test::TempDir dir;
  const std::string model = (dir / "abcd.safetensors").string();
  auto compile = run_krc(
      {"compile", "--regex", "a(b|c)*d", "--alphabet", "a,b,c,d", "-o", model, "--max-len", "16"});
  CAPTURE(compile.err);
  REQUIRE(compile.status == 0);
  CHECK(contains(compile.err, "krc: output accepting: 4 states answer it"));
  CHECK(contains(compile.out, "regex: 4 states, 4 letters"));
  auto verify = run_krc({"verify", model});
  CHECK(verify.status == 0);
  // a b c b d: accepted after the last letter only (a(b|c)*d needs the d at the end).
  auto run = run_krc({"run", model, "--json", "a", "b", "c", "b", "d"});
  REQUIRE(run.status == 0);
  const auto states = nlohmann::json::parse(run.out)["states"];
  REQUIRE(states.size() == 6);
  for (std::size_t t = 0; t < 6; ++t) CHECK(accepting(states[t].get<std::string>()) == (t == 5));
  // Without --alphabet the letters are the pattern's.
  auto info = run_krc({"info", "--regex", "a(b|c)*d", "--json"});
  REQUIRE(info.status == 0);
  CHECK(nlohmann::json::parse(info.out)["automaton"]["letters"] == 4);
  CHECK(nlohmann::json::parse(info.out)["automaton"]["states"] == 4);
  auto decompose = run_krc({"decompose", "--regex", "(ab)*", "--format", "json"});
  REQUIRE(decompose.status == 0);
  CHECK(nlohmann::json::parse(decompose.out)["automaton"]["states"] == 3);
}

TEST_CASE("krc compile --regex: the empty language is still an acceptor") {
  krc::test::TempDir dir;
  const std::string model = (dir / "none.safetensors").string();
  auto compile = run_krc({"compile", "--regex", "[^ab]", "--alphabet", "a,b", "-o", model});
  CAPTURE(compile.err);
  REQUIRE(compile.status == 0);
  CHECK(contains(compile.err, "krc: output accepting: 1 states answer it"));
}

TEST_CASE("--regex: bad patterns exit 2 naming the column; a file or --regex, not both") {
  krc::test::TempDir dir;
  const std::string model = (dir / "x.safetensors").string();
  auto unclosed = run_krc({"compile", "--regex", "a(b", "-o", model});
  CHECK(unclosed.status == 2);
  CHECK(contains(unclosed.err, "krc: error: --regex: column 2: '(' is not closed by ')'"));
  auto outside = run_krc({"info", "--regex", "ax", "--alphabet", "a,b"});
  CHECK(outside.status == 2);
  CHECK(contains(outside.err, "column 2: 'x' is not a letter of the alphabet"));
  auto twice = run_krc({"info", "--regex", "a", "--alphabet", "a,a"});
  CHECK(twice.status == 2);
  CHECK(contains(twice.err, "listed twice"));
  // Letters end up in the weights file's JSON: not UTF-8 is bad input, not an internal error.
  auto bytes = run_krc({"compile", "--regex", "a", "--alphabet", "a,\xFF", "-o", model});
  CHECK(bytes.status == 2);
  CHECK(contains(bytes.err, "not valid UTF-8"));
  const std::string parity = (krc::test::reference_dir() / "automata" / "parity.json").string();
  for (const std::vector<std::string>& args : {std::vector<std::string>{"info"},
                                               {"info", parity, "--regex", "a"},
                                               {"decompose", parity, "--alphabet", "a"},
                                               {"info", "--regex", "a", "--initial", "x"},
                                               {"info", "--regex", "a", "--input-format", "dot"}}) {
    auto r = run_krc(args);
    CAPTURE(r.err);
    CHECK(r.status == 2);
  }
  CHECK_FALSE(std::filesystem::exists(model));
}
