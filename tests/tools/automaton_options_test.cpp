// One vocabulary on the command line: every command that reads an automaton takes
// --input-format, --complete and --initial; --format is decompose's output format only;
// `krc info` tells weights from descriptions without confusing them; `krc info` and
// `krc decompose` agree with each other and with SgpDec on the semigroup facts.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.hpp"

using krc::test::contains;
using krc::test::run_krc;
namespace fs = std::filesystem;

namespace {

// Partial, no start marker, no extension: needs all three options.
const char* kBareDot =
    "digraph {\n  s0 -> s1 [label=\"a\"];\n  s1 -> s0 [label=\"a\"];\n  s0 -> s0 "
    "[label=\"b\"];\n}\n";

struct Facts {
  nlohmann::json size, aperiodic, solvable;
};

Facts info_facts(const std::vector<std::string>& args) {
  std::vector<std::string> command{"info"};
  command.insert(command.end(), args.begin(), args.end());
  command.push_back("--json");
  auto r = run_krc(command);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  const auto& semigroup = j.at("automaton").at("semigroup");
  CHECK(semigroup.at("size") == j.at("decomposition").at("semigroup").at("size"));
  CHECK(semigroup.at("aperiodic") == j.at("decomposition").at("semigroup").at("aperiodic"));
  return {semigroup.at("size"), semigroup.at("aperiodic"),
          j.at("decomposition").at("semigroup").at("solvable")};
}

Facts decompose_facts(const std::vector<std::string>& args) {
  std::vector<std::string> command{"decompose"};
  command.insert(command.end(), args.begin(), args.end());
  command.insert(command.end(), {"--format", "json", "--no-tables"});
  auto r = run_krc(command);
  REQUIRE(r.status == 0);
  const auto semigroup = nlohmann::json::parse(r.out).at("semigroup");
  return {semigroup.at("size"), semigroup.at("aperiodic"), semigroup.at("solvable")};
}

}  // namespace

TEST_CASE("compile, decompose and info all take --input-format, --complete and --initial") {
  krc::test::TempDir dir;
  const std::string input = krc::test::write_file(dir, "machine", kBareDot);
  const std::vector<std::string> options{"--input-format", "dot", "--complete", "--initial", "s1"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), options.begin(), options.end());
    return args;
  };
  auto info = run_krc(with({"info", input}));
  CHECK(info.status == 0);
  CHECK(contains(info.out, "3 states, 2 letters"));
  CHECK(contains(info.out, "initial state s1"));
  auto decompose = run_krc(with({"decompose", input, "--format", "json"}));
  CHECK(decompose.status == 0);
  CHECK(nlohmann::json::parse(decompose.out).at("automaton").at("states") == 3);
  const std::string model = (dir / "model.safetensors").string();
  auto compile = run_krc(with({"compile", input, "-o", model, "--max-len", "16"}));
  CHECK(compile.status == 0);
  auto weights = run_krc({"info", model, "--json"});
  REQUIRE(weights.status == 0);
  CHECK(nlohmann::json::parse(weights.out).at("automaton").at("initial") == "s1");
  // Without --initial the first state listed is initial, said on stderr with the option.
  for (const char* command : {"info", "decompose"}) {
    auto r = run_krc({command, input, "--complete"});
    CHECK(r.status == 0);
    CHECK(contains(r.err, "krc: note: " + input + ": no start marker"));
    CHECK(contains(r.err, "'s0'"));
    CHECK(contains(r.err, "--initial"));
  }
}

TEST_CASE("--format is decompose's output format, elsewhere it points to --input-format") {
  const std::string input = (krc::test::reference_dir() / "automata" / "parity.json").string();
  krc::test::TempDir dir;
  for (const char* command : {"compile", "info"}) {
    CAPTURE(command);
    auto r = run_krc({command, input, "--format", "json", "-o", (dir / "x").string()});
    CHECK(r.status == 2);
    CHECK(contains(r.err, "--input-format"));
    CHECK_FALSE(fs::exists(dir / "x"));
  }
  auto r = run_krc({"decompose", input, "--input-format", "json", "--format", "json"});
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(r.out).at("automaton").at("name") == "parity");
}

TEST_CASE("krc info tells weights from descriptions by extension, then by content") {
  krc::test::TempDir dir;
  // "digraph {" has '{' as its ninth byte, as a weights file's header does.
  const std::string dot = krc::test::write_file(
      dir, "anonymous", "digraph {\n  __start0 -> s0;\n  s0 -> s0 [label=\"a\"];\n}\n");
  auto as_automaton = run_krc({"info", dot});
  CHECK(as_automaton.status == 0);
  CHECK(contains(as_automaton.out, "automaton anonymous: 1 states, 1 letters"));
  const std::string model = (dir / "model.safetensors").string();
  REQUIRE(run_krc({"compile", dot, "-o", model, "--max-len", "8"}).status == 0);
  fs::copy_file(model, dir / "weights.bin");
  auto as_network = run_krc({"info", (dir / "weights.bin").string()});
  CHECK(as_network.status == 0);
  CHECK(contains(as_network.out, "network for automaton 'anonymous'"));
  // A weights file given where a description is expected says what it is.
  auto compile = run_krc({"compile", (dir / "weights.bin").string(), "-o", (dir / "y").string()});
  CHECK(compile.status == 2);
  CHECK(contains(compile.err, "weights file"));
}

TEST_CASE("krc info and krc decompose agree with each other and with SgpDec") {
  // SgpDec's semigroup sizes (null beyond 200,000 elements) and its holonomy groups: aperiodic
  // exactly when every group is trivial, solvable when every group is.
  for (const std::string set : {"", "random"}) {
    const auto dir = krc::test::reference_dir() / set;
    const auto sgpdec = nlohmann::json::parse(krc::test::read_text(dir / "sgpdec_holonomy.json"));
    for (const auto& [name, expected] : sgpdec.items()) {
      CAPTURE(name);
      const std::string file = (dir / "automata" / (name + ".json")).string();
      const Facts info = info_facts({file}), decompose = decompose_facts({file});
      CHECK(info.size == decompose.size);
      CHECK(info.aperiodic == decompose.aperiodic);
      CHECK(info.solvable == decompose.solvable);
      if (!info.size.is_null()) CHECK(info.size == expected.at("semigroup_size"));
      bool aperiodic = true, solvable = true;
      for (const auto& c : expected.at("components")) {
        aperiodic = aperiodic && c.at("order").get<std::uint64_t>() == 1;
        solvable = solvable && c.at("solvable").get<bool>();
      }
      CHECK(info.aperiodic == aperiodic);
      CHECK(info.solvable == solvable);
    }
  }
}

TEST_CASE("krc info and krc decompose agree on every real-world file that reads") {
  const auto dir = krc::test::reference_dir() / "realworld" / "files";
  const std::vector<std::vector<std::string>> files{
      {"aalpy__TCP_Linux_Client.dot"},
      {"aalpy__TLS_JSSE_1.8.0_25_server_regular.dot"},
      {"aalpy__BLE_CYW43455.dot"},
      {"aalpy__Angluin_Mealy.dot"},
      {"aalpy__tomita_5.dot"},
      {"flexfringe__toy_dfa_0.dot", "--complete"},
      {"jflap8recon__ex1.1a.jff", "--complete"},
      {"jflapautograder__HW210215.jff"},
      {"mealyverifier__ssh_DropBear.dot", "--initial", "s0"}};
  for (auto args : files) {
    CAPTURE(args[0]);
    args[0] = (dir / args[0]).string();
    const Facts info = info_facts(args), decompose = decompose_facts(args);
    CHECK(info.size == decompose.size);
    CHECK(info.aperiodic == decompose.aperiodic);
    CHECK(info.solvable == decompose.solvable);
  }
}

TEST_CASE("krc info: a decomposition limit names its option and value, the rest still prints") {
  const std::string input =
      (krc::test::reference_dir() / "automata" / "full_transformations_5.json").string();
  auto r = run_krc({"info", input, "--max-images", "5"});
  CHECK(r.status == 0);
  CHECK(contains(r.out, "semigroup: 3,125 elements"));
  CHECK(contains(r.out, "decomposition: out of reach"));
  CHECK(contains(r.out, "--max-images (now 5)"));
}

TEST_CASE("krc compile and krc verify by default on the real-world files collected for issue 23") {
  // The files are the rows of SOURCES.md's "Collected" table, so a file added there is tested.
  const auto root = krc::test::reference_dir() / "realworld";
  const std::string sources = krc::test::read_text(root / "SOURCES.md");
  const auto section = sources.find("## Collected for issue 23");
  REQUIRE(section != std::string::npos);
  std::vector<std::string> files;
  std::istringstream lines(sources.substr(section));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| aalpy__", 0) == 0) files.push_back(line.substr(2, line.find(" |", 2) - 2));
  CHECK(files.size() == 6);
  // And JFLAP's epsilon-only test_fa, refused until its empty alphabet compiled: one state, no
  // letters, a network of no layers whose only word is the empty one (empty_alphabet_cli_test).
  files.push_back("jflapcheck__test_fa.jff");
  // At KRC_TEST_SCALE < 1 a sample of the files: under the sanitizers each default krc verify
  // (100,000 exhaustive words, then random ones for about a minute) takes minutes.
  const auto sample = krc::test::scaled_sample(files);
  MESSAGE(sample.size() << " of " << files.size() << " files compiled and verified");
  for (const auto& file : sample) {
    CAPTURE(file);
    krc::test::TempDir dir;
    const std::string model = (dir / "model.safetensors").string();
    const auto compile = run_krc({"compile", (root / "files" / file).string(), "-o", model});
    REQUIRE(compile.status == 0);
    const auto verify = run_krc({"verify", model});
    CHECK(verify.status == 0);
    CHECK(contains(verify.out, "all right"));
  }
}
