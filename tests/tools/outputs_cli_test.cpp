// The TCP server's model end to end (issue 23): compiled for its Mealy outputs, verified, and
// run on its own letters (which hold commas and parentheses), one argument each and as one
// string; every position's answer is checked against the file's edges, read here by regex.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "test_support.hpp"

using krc::test::contains;

namespace {

// The Mealy output after each prefix of `word`, from the file's `s -> t[label="in/out"]`
// lines; "-" before the first letter.
std::vector<std::string> tcp_outputs(const std::string& text,
                                     const std::vector<std::string>& word) {
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> step;
  std::smatch m;
  const std::regex edge(R"re((\w+) -> (\w+)\[label="([^"/]*)/([^"]*)"\])re");
  for (auto it = text.cbegin(); std::regex_search(it, text.cend(), m, edge); it = m[0].second)
    step[{m[1], m[3]}] = {m[2], m[4]};
  std::string q = "s0";  // __start0 -> s0
  std::vector<std::string> out{"-"};
  for (const auto& a : word) {
    const auto& [to, output] = step.at({q, a});
    q = to;
    out.push_back(output);
  }
  return out;
}

// A state named "OUT" or "OUT#k" answers OUT.
std::string output_of(const std::string& state) { return state.substr(0, state.rfind('#')); }

}  // namespace

TEST_CASE("krc compile --output-kind mealy: the TCP server answers what the file answers") {
  const auto file =
      krc::test::reference_dir() / "realworld" / "files" / "aalpy__TCP_tcp_server_bsd_trans.dot";
  krc::test::TempDir dir;
  const std::string model = (dir / "tcp.safetensors").string();
  auto compile = krc::test::run_krc(
      {"compile", file.string(), "-o", model, "--max-len", "16", "--strategy", "scan"});
  REQUIRE(compile.status == 0);
  CHECK(contains(compile.err, "krc: output mealy:"));  // the default: the file carries it
  auto verify = krc::test::run_krc({"verify", model});
  CHECK(verify.status == 0);

  const std::vector<std::string> word{"SYN(V,V,0)",     "ACK(V,V,0)",      "ACK+PSH(V,V,1)",
                                      "FIN+ACK(V,V,0)", "CLOSECONNECTION", "RST(V,V,0)"};
  const auto expected = tcp_outputs(krc::test::read_text(file), word);
  std::vector<std::string> one_each{"run", model, "--json"};
  one_each.insert(one_each.end(), word.begin(), word.end());
  std::string joined;  // the same word as one string: commas inside brackets do not split
  for (const auto& a : word) joined += (joined.empty() ? "" : ",") + a;
  for (const auto& args : {one_each, std::vector<std::string>{"run", model, "--json", joined}}) {
    auto run = krc::test::run_krc(args);
    CAPTURE(run.err);
    REQUIRE(run.status == 0);
    const auto out = nlohmann::json::parse(run.out);
    REQUIRE(out["states"].size() == expected.size());
    for (std::size_t t = 0; t < expected.size(); ++t)
      CHECK(output_of(out["states"][t].get<std::string>()) == expected[t]);
  }
}
