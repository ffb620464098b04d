#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "krc/runtime/forward.hpp"
#include "krc/runtime/weights_file.hpp"
#include "reset_network.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

Automaton abc_reset() { return test::reset_automaton({"a", "b", "c"}, {1, 2, 1}, 3); }

std::string write_network(const test::TempDir& dir, const std::string& name, const Network& n) {
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << network_to_safetensors(n);
  return path;
}

std::vector<std::string> state_names(const Automaton& a, const std::vector<StateId>& states) {
  std::vector<std::string> names;
  for (StateId s : states) names.push_back(a.state_name(s));
  return names;
}

}  // namespace

TEST_CASE("krc verify: exit 0 on a right network, 1 with a counterexample on a wrong one") {
  test::TempDir dir;
  Automaton a = abc_reset();
  const std::string good = write_network(dir, "good.safetensors", test::reset_network(a));
  auto ok = test::run_krc({"verify", good, "--random", "20"});
  CHECK(ok.status == 0);
  CHECK(ok.out.rfind("verified ", 0) == 0);
  CHECK(ok.out.find("all right") != std::string::npos);

  test::ResetNetworkOptions wrong;
  wrong.wrong_letter = 1;
  wrong.wrong_state = 1;
  const std::string bad = write_network(dir, "bad.safetensors", test::reset_network(a, wrong));
  auto failed = test::run_krc({"verify", bad, "--exhaustive", "2", "--random", "0"});
  CHECK(failed.status == 1);
  CHECK(failed.out.rfind("FAILED: 6 of 27 positions wrong, in 5 of 9 words", 0) ==
        0);  // b is at each of 2 places in 3 words; 5 words have one
  CHECK(failed.out.find(
            "first counterexample: exhaustive word 1 (length 2), first wrong at position 2") !=
        std::string::npos);

  auto as_json =
      test::run_krc({"verify", bad, "--exhaustive", "2", "--random", "4", "--length", "7", "--seed",
                     "9", "--attention", "hard", "--float64", "--threads", "1", "--json"});
  CHECK(as_json.status == 1);
  json report = json::parse(as_json.out);
  CHECK(report["ok"] == false);
  CHECK(report["words"] == 9 + 4);
  CHECK(report["positions"] == 9 * 3 + 4 * 8);
  CHECK(report["random"]["seed"] == 9);
  CHECK(report["attention"] == "hard");
  CHECK(report["arithmetic"] == "float64");
  CHECK(report["counterexample"]["word"] == json({"a", "b"}));
}

TEST_CASE("krc verify and run: the arithmetic and the attention are chosen and reported") {
  test::TempDir dir;
  Automaton a = abc_reset();
  const std::string good = write_network(dir, "good.safetensors", test::reset_network(a));
  for (const std::string arithmetic : {"float32", "float64-accumulate", "float64"}) {
    auto result = test::run_krc({"verify", good, "--random", "5", "--arithmetic", arithmetic,
                                 "--attention", "hardmax", "--json"});
    CHECK(result.status == 0);
    json report = json::parse(result.out);
    CHECK(report["arithmetic"] == arithmetic);
    CHECK(report["attention"] == "hardmax");
    auto text = test::run_krc({"verify", good, "--random", "5", "--arithmetic", arithmetic});
    CHECK(text.out.find("arithmetic " + arithmetic + " (") != std::string::npos);
    auto run = test::run_krc({"run", good, "abc", "--arithmetic", arithmetic, "--json"});
    CHECK(json::parse(run.out)["arithmetic"] == arithmetic);
  }
  auto plain = test::run_krc({"verify", good, "--random", "5", "--json"});
  CHECK(json::parse(plain.out)["arithmetic"] == to_string(kDefaultArithmetic));
  CHECK(test::run_krc({"verify", good, "--float64", "--arithmetic", "float32"}).status == 2);
  CHECK(test::run_krc({"verify", good, "--arithmetic", "float16"}).status == 2);
}

TEST_CASE("krc verify: bad options exit 2") {
  test::TempDir dir;
  const std::string good = write_network(dir, "good.safetensors", test::reset_network(abc_reset()));
  auto too_long = test::run_krc({"verify", good, "--length", "13"});  // max_len 12
  CHECK(too_long.status == 2);
  CHECK(too_long.err.find("--length") != std::string::npos);
  CHECK(test::run_krc({"verify", good, "--exhaustive", "40"}).status == 2);
  CHECK(test::run_krc({"verify", good, "--attention", "linear"}).status == 2);
  auto nothing = test::run_krc({"verify", good, "--exhaustive", "0", "--random", "0"});
  CHECK(nothing.status == 2);
  CHECK(nothing.err.find("nothing to verify") != std::string::npos);
  CHECK(test::run_krc({"verify"}).status == 2);
}

TEST_CASE("krc run: the state after every prefix, letters given in any of the accepted ways") {
  test::TempDir dir;
  Automaton a = abc_reset();
  const std::string path = write_network(dir, "good.safetensors", test::reset_network(a));
  const std::vector<LetterId> word{0, 1, 2, 2, 1};
  const json expected = state_names(a, a.run(word));
  for (const auto& letters : std::vector<std::vector<std::string>>{
           {"a", "b", "c", "c", "b"}, {"a,b,c", "c b"}, {"a b c c b"}, {"abccb"}}) {
    std::vector<std::string> args{"run", path, "--json"};
    args.insert(args.end(), letters.begin(), letters.end());
    auto result = test::run_krc(args);
    REQUIRE(result.status == 0);
    json out = json::parse(result.out);
    CHECK(out["states"] == expected);
    CHECK(out["expected"] == expected);
    CHECK(out["letters"] == json({"a", "b", "c", "c", "b"}));
    CHECK(out["margins"][1] == 1.0);
  }
  auto text = test::run_krc({"run", path, "a", "b"});
  CHECK(text.status == 0);
  CHECK(text.out.find("<bos>") != std::string::npos);
  CHECK(std::count(text.out.begin(), text.out.end(), '\n') == 4);  // header + 3 positions

  for (const std::string empty : {"", " ", ",,"}) {  // the empty word: <bos> alone
    auto none = test::run_krc({"run", path, "--json", empty});
    REQUIRE(none.status == 0);
    CHECK(json::parse(none.out)["states"] == state_names(a, a.run({})));
  }

  auto unknown = test::run_krc({"run", path, "a", "x"});
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("\"x\"") != std::string::npos);
  auto too_long = test::run_krc({"run", path, std::string(13, 'a')});
  CHECK(too_long.status == 2);
  CHECK(too_long.err.find("max_len") != std::string::npos);
}
