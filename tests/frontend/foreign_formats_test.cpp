// Formats krc does not read (Abbadingo's numbers-only samples) are refused by name; those it reads
// that resemble others (a RABIT file's "[0]" opens like JSON, GOAL's XML like JFLAP's) are
// read as what they are; gzip-compressed input of any format is read, within the description
// cap, so that a decompression bomb stops there.
#include <doctest/doctest.h>
#include <zlib.h>

#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <tuple>

#include "frontend_test_helpers.hpp"
#include "krc/automata/memory_budget.hpp"

using namespace krc;
using test::contains;

namespace {

std::string gzip(const std::string& text) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                       Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(text.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

const std::string kDot =
    "digraph g {\n  s0 [shape=doublecircle];\n  s0 -> s1 [label=\"a\"];\n"
    "  s1 -> s0 [label=\"a\"];\n  __start0 -> s0;\n}\n";

}  // namespace

TEST_CASE("Foreign formats are refused by name") {
  struct Case {
    std::string name, text, says;
  };
  const std::vector<Case> cases{
      // Abbadingo's training set (count and alphabet, then label, length and letters): words,
      // not an automaton, whatever the extension says. (Stamina's ADL has true/false flags.)
      {"x.adl", "3 2\n1 2 0 1\n0 1 0\n1 0\n", "Abbadingo"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string problem = test::load_error(c.name, c.text).problem();
    CHECK(contains(problem, c.says));
    CHECK(contains(problem, "which krc does not read (yet)"));
  }
  // RABIT, GOAL, AutomataLib, FSM, mata and ETF files are read, as what they are, whatever the
  // extension says (ondrik/automata-benchmarks' .ba, GOAL's type="fa" misnamed .jff, TAF).
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"rabit.ba", "0\n1,0->1\n3,1->2\n0\n1\n2\n"},
           {"rabit2", "[0]\na,[0]->[1]\nb,[1]->[0]\n[1]\n"},
           {"goal.jff",
            "<structure label-on=\"transition\" type=\"fa\"><alphabet type=\"classical\">"
            "<symbol>a</symbol></alphabet><stateSet><state sid=\"0\"/></stateSet><transitionSet>"
            "<transition tid=\"0\"><from>0</from><to>0</to><read>a</read></transition>"
            "</transitionSet><acc type=\"buchi\"><stateID>0</stateID></acc></structure>\n"},
           {"a.json", "dfa {a, b} {\n  s0 [initial, acc] {\n    a -> s1\n  }\n}\n"},
           // mCRL2's and LTSmin's FSM (mCRL2 user manual, "The FSM file format")
           {"x.txt", "b(2) Bool \"F\" \"T\"\n---\n0\n1\n---\n1 2 \"on\"\n"},
           {"x2", "---\n---\n1 2 \"on\"\n"},
           // mata (VeriFIT): @NFA-explicit
           {"nfa.txt", "@NFA-explicit\n%Alphabet-auto\n%Initial q0\n%Final q1\nq0 a q1\n"},
           // Stamina's ADL, after a '#' comment (DOT's preprocessor line otherwise)
           {"stamina.txt", "# a(ba)*\n2 2\n0 true false\n1 false true\n0 1 a\n1 0 b\n"},
           // LTSmin's ETF: "begin state"
           {"etf.txt",
            "begin state\nx:int\nend state\nbegin edge\nend edge\nbegin init\n0\nend "
            "init\n"}}) {
    CAPTURE(name);
    CHECK(test::load_text(name, text).state_count() >= 1);
  }
  // Asked for by name, a format is read as that format (and fails as it does).
  LoadOptions as_json;
  as_json.format = "json";
  CHECK(!contains(test::load_error("r.ba", "[0]\na,[0]->[1]\n[1]\n", "", as_json).problem(),
                  "RABIT"));
}

TEST_CASE("gzip-compressed input of any format") {
  const Automaton plain = test::load_text("m.dot", kDot);
  const Automaton by_extension = test::load_text("m.dot.gz", gzip(kDot));
  CHECK(by_extension.transitions() == plain.transitions());
  CHECK(by_extension.name() == "m");
  CHECK(test::load_text("m.gz", gzip(kDot)).transitions() == plain.transitions());  // by content
  CHECK(test::load_text("noext", gzip(kDot)).state_count() == 2);
  // LearnLib writes .taf.gz (and .dot.gz): a TAF hypothesis, by extension and by content.
  const std::string taf =
      "dfa {a, b} {\n  s0 [initial, accepting] {\n    a -> s1\n    b -> s0\n  }"
      "\n  s1 { * -> s0 }\n}\n";
  CHECK(test::load_text("h.taf.gz", gzip(taf)).state_count() == 2);
  CHECK(test::load_text("h", gzip(taf)).state_count() == 2);
  // Two members, as `cat a.gz b.gz` makes: one text.
  const std::string half = kDot.substr(0, 20);
  CHECK(test::load_text("two.dot.gz", gzip(half) + gzip(kDot.substr(20))).state_count() == 2);
  CHECK(contains(test::load_error("cut.dot.gz", gzip(kDot).substr(0, 30)).problem(), "cut short"));
  CHECK(contains(
      test::load_error("bad.gz", std::string("\x1f\x8b\x08\x00garbage-garbage", 19)).problem(),
      "gzip"));
  CHECK(contains(test::load_error("nested.gz", gzip(gzip(kDot))).problem(), "inside a gzip"));
  CHECK(contains(
      test::load_error("nul.gz", gzip(std::string("digraph g {\0}", 13)), "line 1").problem(),
      "NUL"));
  // A bomb: 64 MiB of spaces in a few KiB stop at the cap (1/32 of the budget: 1 MiB here).
  const std::uint64_t budget = memory_budget();
  set_memory_budget(32u << 20);
  const std::string bomb = gzip(std::string(64u << 20, ' '));
  CHECK(bomb.size() < 100000);
  test::TempDir dir;
  const std::string path = test::write_file(dir, "bomb.dot.gz", bomb);
  CHECK_THROWS_WITH_AS(load_automaton(path), doctest::Contains("decompresses to more than"),
                       LimitError);
  set_memory_budget(budget);
}

TEST_CASE(
    "HOA, Aldebaran, RABIT, GOAL, TAF, FSM, VTF, ETF and sniffed input: mutated files fail only as "
    "bad input") {
  // A stand-in for tools/fuzz.sh where clang is missing: the fuzz targets' seeds, each byte
  // mutated, deleted, duplicated or replaced by a token; anything but an automaton, an
  // InputError or a LimitError escapes and fails the test.
  const std::vector<std::pair<std::string, std::string>> seeds{
      {"hoa", "hoa/spec_aut7.hoa"},         {"hoa", "hoa/spec_aut2.hoa"},
      {"hoa", "hoa/spec_aut4.hoa"},         {"hoa", "hoa/tela_out_230.hoa"},
      {"aut", "aut/mcrl2_dining2.aut"},     {"", "hoa/owl_ltl2dra_FaGb.hoa"},
      {"ba", "ba/rabit_fold.ba"},           {"gff", "gff/goal_react_quickly_c0.gff"},
      {"taf", "taf/automatalib_mealy.taf"}, {"", "taf/automatalib_dfa.taf"},
      {"fsm", "fsm/mcrl2_fan.fsm"},         {"vtf", "vtf/mata_nfa_anbn_n2.mata"},
      {"vtf", "vtf/mata_bits_aut1.mata"},   {"etf", "etf/ltsmin_manpage_example.etf"}};
  const std::vector<std::string> tokens{"&",
                                        "|",
                                        "!",
                                        "(",
                                        ")",
                                        "[",
                                        "]",
                                        "{",
                                        "}",
                                        "/*",
                                        "*/",
                                        "\"",
                                        "@a",
                                        "t",
                                        "Inf(0)",
                                        "0&1",
                                        "2147483647",
                                        "State:",
                                        ",",
                                        "i",
                                        "->",
                                        "~",
                                        "<state sid=\"9\">",
                                        "*",
                                        "..",
                                        "begin trans",
                                        "end",
                                        "0/1",
                                        "%"};
  std::mt19937 rng(34);
  std::size_t read = 0, refused = 0;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const auto& [format, name] = seeds[i];
    const std::string seed = test::read_text(test::frontend_data(name));
    // The small line formats (the last six seeds) need fewer mutants to reach their branches.
    const int mutants = i < 6 ? 5000 : 2000;
    for (int k = 0; k < mutants; ++k) {
      std::string text = seed;
      const int edits = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int e = 0; e < edits && !text.empty(); ++e) {
        const std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(rng);
        switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
          case 0:
            text[at] = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
            break;
          case 1:
            text.erase(at, std::uniform_int_distribution<std::size_t>(1, 8)(rng));
            break;
          case 2:
            text.insert(at,
                        text.substr(at, std::uniform_int_distribution<std::size_t>(1, 40)(rng)));
            break;
          default:
            text.insert(
                at, tokens[std::uniform_int_distribution<std::size_t>(0, tokens.size() - 1)(rng)]);
        }
      }
      LoadOptions options;
      options.format = format;
      options.completion.add_sink = k % 2 == 1;
      try {
        const Automaton a =
            parse_automaton(text, "mutant." + (format.empty() ? "x" : format), options);
        CHECK(a.state_count() > 0);
        ++read;
      } catch (const InputError&) {
        ++refused;
      } catch (const LimitError&) {
        ++refused;
      }
    }
  }
  MESSAGE(read << " mutants read, " << refused << " refused");
  CHECK(read > 0);
  CHECK(refused > 0);
}

// FlexFringe's JSON output (data/flexfringe/SOURCES.md), against the edges its text spells,
// read here with a regular expression: each edge's source, target and name must be a
// transition of the automaton, the root node (source -1) initial, FlexFringe's alphabet the
// letters in its order.
TEST_CASE("FlexFringe's JSON output reads as its automaton") {
  const auto path = test::frontend_data("flexfringe/simple1.final.json");
  const std::string text = test::read_text(path);
  const std::regex edge(R"re("source" : "(\d+)",\s*"target" : "(\d+)",\s*"name": "([^"]*)")re");
  std::vector<std::tuple<std::string, std::string, std::string>> edges;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), edge); it != std::sregex_iterator();
       ++it)
    edges.emplace_back((*it)[1], (*it)[3], (*it)[2]);
  REQUIRE(edges.size() == 8);  // 4 nodes, complete over {1, 0}
  const Automaton a = load_automaton(path.string());
  CHECK(a.name() == "simple1.final");
  CHECK(a.states() == std::vector<std::string>{"0", "1", "2", "3"});
  CHECK(a.letters() == std::vector<std::string>{"1", "0"});
  CHECK(a.state_name(a.initial()) == "0");
  CHECK(a.accepting().empty());  // the counts are statistics, not acceptance
  for (const auto& [from, symbol, to] : edges)
    CHECK(a.state_name(a.step(static_cast<StateId>(a.find_state(from)),
                              static_cast<LetterId>(a.find_letter(symbol)))) == to);
  // Bad FlexFringe documents name the JSON pointer.
  CHECK(contains(test::load_error("e.json",
                                  "{\"nodes\": [{\"id\": 0}], \"edges\": [{\"source\": "
                                  "\"0\", \"target\": \"9\", \"name\": \"a\"}]}",
                                  "/edges/0/target")
                     .problem(),
                 "9"));
  test::load_error("n.json", "{\"nodes\": 3, \"edges\": []}", "/nodes");
  test::load_error("i.json", "{\"nodes\": [{\"id\": [1]}], \"edges\": []}", "/nodes/0/id");
  test::load_error("m.json", "{\"nodes\": [{\"id\": 0}], \"edges\": [{\"source\": 0}]}",
                   "/edges/0");
  test::load_error("z.json", "{\"nodes\": [], \"edges\": []}", "/nodes");
}
