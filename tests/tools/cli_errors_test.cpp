// Bad input through the krc command (issue #2): exit status 2, a message that names the file
// and the place, and no output file, or an existing one left exactly as it was.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "krc/automata/automaton_json.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;
using test::contains;
using test::write_file;
namespace fs = std::filesystem;

namespace {

// `krc compile input -o OUT` must fail with status 2 and a message naming the file and the
// place, twice: once with no OUT (none may appear), once over an existing OUT (it must keep
// its bytes). Returns the message.
std::string check_compile_rejects(const std::string& input, const std::vector<std::string>& place,
                                  const std::vector<std::string>& options = {}) {
  test::TempDir out_dir;
  const std::string out = (out_dir / "out.safetensors").string();
  std::vector<std::string> args{"compile", input, "-o", out};
  args.insert(args.end(), options.begin(), options.end());
  auto fresh = test::run_krc(args);
  CAPTURE(fresh.err);
  CHECK(fresh.status == 2);
  CHECK(contains(fresh.err, "krc: error: " + input + ": "));
  bool place_named = false;
  for (const auto& p : place)
    place_named = place_named || contains(fresh.err, input + ": " + p + ": ");
  CHECK(place_named);
  CHECK(fresh.out.empty());
  CHECK_FALSE(fs::exists(out));

  const std::string previous = "an earlier output, not to be touched\n";
  write_file(out_dir, "out.safetensors", previous);
  args.insert(args.end(), {"--strategy", "scan"});
  auto over = test::run_krc(args);
  CHECK(over.status == 2);
  CHECK(over.err == fresh.err);
  CHECK(test::read_text(out) == previous);
  // No temporary file left next to it either.
  CHECK(std::distance(fs::directory_iterator(out_dir.path()), fs::directory_iterator()) == 1);
  return fresh.err;
}

}  // namespace

// ---- description files -----------------------------------------------------------------

TEST_CASE("krc compile: an input that is not JSON") {
  test::TempDir dir;
  // Line 4, column 33 is the ']' where '}' should close "transitions".
  const std::string broken =
      write_file(dir, "broken.json",
                 "{\"states\": [\"a\", \"b\"],\n \"alphabet\": [\"x\"],\n \"initial\": \"a\",\n"
                 " \"transitions\": {\"x\": [\"b\", \"a\"]]\n}\n");
  std::string err = check_compile_rejects(broken, {"line 4, column 33"});
  CHECK(contains(err, "not valid JSON"));
  // Not JSON at all, though the extension says so.
  const std::string prose = write_file(dir, "prose.json", "\n\nstates: a, b\n");
  err = check_compile_rejects(prose, {"line 3, column 1"});
  CHECK(contains(err, "not valid JSON"));
}

TEST_CASE("krc compile: a number beyond a double's range is placed like a syntax error") {
  test::TempDir dir;
  // Valid JSON that nlohmann cannot hold: it throws a different exception, without a place.
  const std::string input = write_file(dir, "huge.json",
                                       "{\"states\": [\"a\"],\n \"alphabet\": [\"x\"],\n"
                                       " \"initial\": 0,\n \"transitions\": {\"x\": [-1e400]}}\n");
  std::string err = check_compile_rejects(input, {"line 4, column 24"});  // where -1e400 starts
  CHECK(contains(err, "too large"));
}

TEST_CASE("krc compile: a transition to an unknown state") {
  test::TempDir dir;
  const std::string input = write_file(
      dir, "unknown.json",
      R"({"states": ["a", "b"], "alphabet": ["x", "y"], "initial": "a", "transitions": {"x": ["b", "a"], "y": ["a", "c"]}})");
  std::string err = check_compile_rejects(input, {"/transitions/y/1"});
  CHECK(contains(err, "'c'"));
  // By index, out of range.
  const std::string by_index = write_file(
      dir, "index.json",
      R"({"states": ["a", "b"], "alphabet": ["x"], "initial": 0, "transitions": {"x": [1, 2]}})");
  err = check_compile_rejects(by_index, {"/transitions/x/1"});
  CHECK(contains(err, "2"));
}

TEST_CASE("krc compile: a missing transition, and --complete adds a sink state") {
  test::TempDir dir;
  // b has no transition on y (the list is one short).
  const std::string input = write_file(
      dir, "partial.json",
      R"({"states": ["a", "b"], "alphabet": ["x", "y"], "initial": "a", "transitions": {"x": ["b", "a"], "y": ["a"]}})");
  // The place is the state that lacks the letter, or the letter's list.
  std::string err = check_compile_rejects(input, {"/states/1", "/transitions/y"});
  CHECK(contains(err, "state 'b'"));
  CHECK(contains(err, "letter 'y'"));
  CHECK(contains(err, "--complete"));

  const std::string out = (dir / "completed.safetensors").string();
  auto completed = test::run_krc({"compile", input, "--complete", "--max-len", "16", "-o", out});
  CAPTURE(completed.err);
  REQUIRE(completed.status == 0);
  // The automaton README promises: a sink after the other states, taking the missing
  // transition and looping on every letter.
  const Automaton expected("partial", {"a", "b", "sink"}, {"x", "y"}, {{1, 0, 2}, {0, 2, 2}}, 0);
  auto info = test::run_krc({"info", out, "--json"});
  REQUIRE(info.status == 0);
  CHECK(automaton_from_json(json::parse(info.out)["automaton"], out) == expected);
  auto verified = test::run_krc({"verify", out, "--random", "20"});
  CHECK(verified.status == 0);
  auto run = test::run_krc({"run", out, "--json", "x", "y", "x", "y"});  // a, b, sink, sink, sink
  REQUIRE(run.status == 0);
  CHECK(json::parse(run.out)["states"] == json({"a", "b", "sink", "sink", "sink"}));
}

TEST_CASE("krc compile: duplicate state names") {
  test::TempDir dir;
  const std::string input = write_file(
      dir, "duplicate.json",
      R"({"states": ["a", "b", "a"], "alphabet": ["x"], "initial": "a", "transitions": {"x": ["b", "a", "a"]}})");
  std::string err = check_compile_rejects(input, {"/states/2"});
  CHECK(contains(err, "'a'"));
  // In DOT, states named by labels fall back to node ids when labels repeat, so duplicates
  // cannot arise there; in JFLAP the ids must be distinct.
  const std::string jff =
      write_file(dir, "duplicate.jff",
                 "<structure><type>fa</type><automaton>\n"
                 "<state id=\"0\" name=\"q\"><initial/></state>\n"
                 "<state id=\"0\" name=\"r\"/>\n"
                 "<transition><from>0</from><to>0</to><read>a</read></transition>\n"
                 "</automaton></structure>\n");
  err = check_compile_rejects(jff, {"line 3"});
  CHECK(contains(err, "'0'"));
}

// An empty alphabet is no error: it compiles to a network of no layers
// (empty_alphabet_cli_test.cpp).

TEST_CASE("krc compile --no-determinise: a DOT edge whose label repeats a letter of a state") {
  test::TempDir dir;
  const std::string input =
      write_file(dir, "learned.dot",
                 "digraph g {\n"
                 "  s0 -> s1 [label=\"a\"];\n"
                 "  s0 -> s0 [label=\"b\"];\n"
                 "  s1 -> s0 [label=\"a\"];\n"
                 "  s1 -> s1 [label=\"b\"];\n"
                 "  s0 -> s0 [label=\"a / 1\"];\n"  // Mealy label: input a again
                 "  __start0 -> s0;\n"
                 "}\n");
  std::string err = check_compile_rejects(input, {"line 6"}, {"--no-determinise"});
  CHECK(contains(err, "nondeterminism"));
  CHECK(contains(err, "'s0'"));
  CHECK(contains(err, "'a'"));
  CHECK(contains(err, "line 2"));  // the edge it contradicts
}

// ---- names that are not UTF-8 ------------------------------------------------------------

TEST_CASE("krc compile: state names and letters that are not UTF-8 are refused at their line") {
  test::TempDir dir;
  const std::string state = write_file(dir, "latin1.dot",
                                       "digraph g {\n"
                                       "  s0 [label=\"0\"];\n"
                                       "  s1 [label=\"caf\xE9\"];\n"  // Latin-1, not UTF-8
                                       "  s0 -> s1 [label=\"a\"];\n"
                                       "  s1 -> s0 [label=\"a\"];\n"
                                       "  __start0 -> s0;\n"
                                       "}\n");
  std::string err = check_compile_rejects(state, {"line 3"});
  CHECK(contains(err, "UTF-8"));
  CHECK(contains(err, "caf\\xE9"));  // shown escaped

  const std::string letter =
      write_file(dir, "letter.dot",
                 "digraph g {\n"
                 "  s0 -> s0 [label=\"\xC3\"];\n"  // a truncated 2-byte sequence
                 "  __start0 -> s0;\n"
                 "}\n");
  err = check_compile_rejects(letter, {"line 2"});
  CHECK(contains(err, "letter"));

  // Well-formed-looking but forbidden: an encoded surrogate (ED A0 80) and an overlong '/'.
  const std::string surrogate =
      write_file(dir, "surrogate.jff",
                 "<structure><type>fa</type><automaton>\n"
                 "<state id=\"0\" name=\"q\xED\xA0\x80\"><initial/></state>\n"
                 "<transition><from>0</from><to>0</to><read>a</read></transition>\n"
                 "</automaton></structure>\n");
  check_compile_rejects(surrogate, {"line 2"});
  const std::string overlong =
      write_file(dir, "overlong.jff",
                 "<structure><type>fa</type><automaton>\n"
                 "<state id=\"0\" name=\"q\"><initial/></state>\n"
                 "<transition><from>0</from><to>0</to><read>\xC0\xAF</read></transition>\n"
                 "</automaton></structure>\n");
  check_compile_rejects(overlong, {"line 3"});

  // The same names in UTF-8 compile, and come back unchanged from the weights file.
  const std::string utf8 =
      write_file(dir, "utf8.dot",
                 "digraph g {\n  s0 [label=\"0\"];\n  s1 [label=\"caf\xC3\xA9\"];\n"
                 "  s0 -> s1 [label=\"\xCE\xB1\"];\n  s1 -> s0 [label=\"\xCE\xB1\"];\n"
                 "  __start0 -> s0;\n}\n");
  const std::string out = (dir / "utf8.safetensors").string();
  REQUIRE(test::run_krc({"compile", utf8, "--max-len", "8", "-o", out}).status == 0);
  auto run = test::run_krc({"run", out, "--json", "\xCE\xB1", "\xCE\xB1", "\xCE\xB1"});
  REQUIRE(run.status == 0);
  CHECK(json::parse(run.out)["states"] == json({"0", "caf\xC3\xA9", "0", "caf\xC3\xA9"}));
}

TEST_CASE("krc compile: a file name that is not UTF-8 still names the automaton") {
  test::TempDir dir;
  // DOT files carry no name, so the automaton is named after the file; its bad byte becomes
  // U+FFFD, and the paths in --json output are printed the same way instead of failing.
  const std::string input = write_file(
      dir, "g\xFF.dot", "digraph g {\n  s0 -> s0 [label=\"a\"];\n  __start0 -> s0;\n}\n");
  const std::string out = (dir / "o\xFE.safetensors").string();
  auto compiled = test::run_krc({"compile", input, "--max-len", "8", "-o", out, "--json"});
  CAPTURE(compiled.err);
  REQUIRE(compiled.status == 0);
  CHECK(json::parse(compiled.out)["automaton"]["name"] == "g\xEF\xBF\xBD");
  auto info = test::run_krc({"info", out, "--json"});
  CAPTURE(info.err);
  REQUIRE(info.status == 0);
  CHECK(json::parse(info.out)["automaton"]["name"] == "g\xEF\xBF\xBD");
  CHECK(test::run_krc({"verify", out, "--random", "5"}).status == 0);
}

// ---- damaged weights files ---------------------------------------------------------------
// tests/runtime covers the container errors through `krc verify` and `krc run` on small
// hand-made files; here the files are real compiler output, and `krc info` is checked too.

namespace {

struct Container {
  json header;
  std::string data;
};

Container split(const std::string& bytes) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  return {json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

std::string join(const Container& c) {
  const std::string header = c.header.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + c.data;
}

// A real compiled network: parity by parallel prefix has several tensors of each kind.
std::string compiled_file(const test::TempDir& dir) {
  const std::string out = (dir / "parity.safetensors").string();
  auto r =
      test::run_krc({"compile", (test::source_dir() / "automata" / "zoo" / "parity.json").string(),
                     "--strategy", "scan", "--max-len", "16", "--dense", "-o", out});
  REQUIRE(r.status == 0);
  return test::read_text(out);
}

// The names of the tensors in data order.
std::vector<std::string> by_offset(const json& header) {
  std::vector<std::pair<std::uint64_t, std::string>> order;
  for (const auto& [name, entry] : header.items())
    if (name != "__metadata__")
      order.emplace_back(entry["data_offsets"][0].get<std::uint64_t>(), name);
  std::sort(order.begin(), order.end());
  std::vector<std::string> names;
  for (const auto& [offset, name] : order) names.push_back(name);
  return names;
}

void check_commands_reject(const test::TempDir& dir, const std::string& bytes,
                           const std::string& place, const std::vector<std::string>& commands) {
  const std::string path = write_file(dir, "damaged.safetensors", bytes);
  for (const auto& command : commands) {
    CAPTURE(command);
    auto r = test::run_krc({command, path});
    CAPTURE(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "krc: error: " + path + ": " + place));
    CHECK_FALSE(contains(r.err, "internal error"));
  }
}

}  // namespace

TEST_CASE("damaged weights files: truncated") {
  test::TempDir dir;
  const std::string good = compiled_file(dir);
  const Container c = split(good);
  const std::string last = by_offset(c.header).back();
  // Cut inside the data, inside the header and inside the length.
  check_commands_reject(dir, good.substr(0, good.size() - 3), "tensor '" + last + "'", {"info"});
  check_commands_reject(dir, good.substr(0, 8 + 40), "header", {"info", "verify"});
  check_commands_reject(dir, good.substr(0, 5), "header", {"info"});
}

TEST_CASE("damaged weights files: a header length beyond the end of the file") {
  test::TempDir dir;
  std::string bytes = compiled_file(dir);
  std::uint64_t claimed = bytes.size();  // 8 more than the header and data together
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((claimed >> (8 * i)) & 0xff);
  check_commands_reject(dir, bytes, "header", {"info"});
}

TEST_CASE("damaged weights files: overlapping offsets and holes") {
  test::TempDir dir;
  const Container good = split(compiled_file(dir));
  const std::vector<std::string> order = by_offset(good.header);
  REQUIRE(order.size() >= 2);
  const std::string last = order.back();
  auto shifted = [&](std::int64_t by) {
    Container c = good;
    for (auto& offset : c.header[last]["data_offsets"]) offset = offset.get<std::int64_t>() + by;
    return c;
  };
  // The last tensor moved back one float, onto the one before it (its size stays right).
  Container overlap = shifted(-4);
  check_commands_reject(dir, join(overlap), "tensor '" + last + "': ", {"info"});
  // Moved forward one float, with the data grown to match: 4 bytes of no tensor before it.
  Container hole = shifted(4);
  hole.data += std::string(4, '\0');
  check_commands_reject(dir, join(hole), "tensor '" + last + "': ", {"info"});
}

TEST_CASE("damaged weights files: a shape that disagrees with the bytes or with the network") {
  test::TempDir dir;
  const Container good = split(compiled_file(dir));
  // More rows than the bytes hold.
  Container longer = good;
  longer.header["embed.position"]["shape"][0] =
      longer.header["embed.position"]["shape"][0].get<int>() + 1;
  check_commands_reject(dir, join(longer), "tensor 'embed.position'", {"info"});
  // The same bytes, transposed: the container is fine, the network is not.
  Container transposed = good;
  auto& shape = transposed.header["embed.token"]["shape"];
  REQUIRE(shape[0] != shape[1]);
  std::swap(shape[0], shape[1]);
  check_commands_reject(dir, join(transposed), "tensor 'embed.token'", {"info", "verify", "run"});
}

// gridworld_25 with a letter that jumps from cell 0 to cell 2 (so that it is no clamped walk,
// which kr builds in two layers): its cascade has 24 levels and more reachable coordinate
// tuples than the default table limits allow. kr alone stops with exit 2 and points at scan;
// auto keeps scan and says why.
TEST_CASE("krc compile: a cascade over the table limits") {
  test::TempDir dir;
  const std::string grid_file = (dir / "gridworld_25.json").string();
  REQUIRE(test::run_krc({"zoo", "gridworld", "--n", "25", "-o", grid_file}).status == 0);
  json grid = json::parse(test::read_text(grid_file));
  grid["alphabet"].push_back("J");
  grid["transitions"]["J"] = grid["states"];
  grid["transitions"]["J"][0] = grid["states"][2];
  const std::string input = write_file(dir, "gridworld_25_jump.json", grid.dump());
  const std::string out = (dir / "out.safetensors").string();
  auto kr = test::run_krc({"compile", input, "--strategy", "kr", "--max-len", "16", "-o", out});
  CHECK(kr.status == 2);
  CHECK(contains(kr.err, "limit"));
  CHECK(contains(kr.err, "--strategy scan"));
  CHECK_FALSE(fs::exists(out));
  auto chosen = test::run_krc({"compile", input, "--max-len", "16", "-o", out, "--json"});
  REQUIRE(chosen.status == 0);
  const json summary = json::parse(chosen.out);
  CHECK(summary["strategy"] == "scan");
  CHECK(contains(summary["reason"].get<std::string>(), "kr was not possible"));
  CHECK(fs::exists(out));
}

TEST_CASE("option choices: the strategy name table's names, and a benchmark leaves auto out") {
  test::TempDir dir;
  const std::string input = (test::reference_dir() / "automata" / "cyclic_3.json").string();
  const std::string out = (dir / "out.safetensors").string();
  auto unknown = test::run_krc({"compile", input, "--strategy", "fast", "-o", out});
  CAPTURE(unknown.err);
  CHECK(unknown.status == 2);
  // The request layer's words (krc.compile says `strategy "fast": must be one of ...`).
  CHECK(contains(unknown.err,
                 "krc: error: --strategy: \"fast\": must be one of \"auto\", "
                 "\"scan\", \"kr\", \"onelayer\""));
  CHECK_FALSE(fs::exists(out));
  // A benchmark names what it builds: auto is not among its choices.
  auto bench = test::run_krc({"bench", "precision", "--strategy", "auto"});
  CAPTURE(bench.err);
  CHECK(bench.status != 0);
  CHECK(contains(bench.err, "{scan,kr,onelayer}"));
  auto output = test::run_krc({"compile", input, "--output-kind", "final", "-o", out});
  CAPTURE(output.err);
  CHECK(output.status == 2);
  CHECK(contains(output.err, "must be one of \"state\", \"accepting\", \"mealy\", \"moore\""));
  // --help still lists the choices.
  auto help = test::run_krc({"compile", "--help"});
  CHECK(contains(help.out, "{auto,scan,kr,onelayer}"));
  CHECK(contains(help.out, "{state,accepting,mealy,moore}"));
}
