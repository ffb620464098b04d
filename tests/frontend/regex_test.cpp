// Regular expressions (regex_reader.hpp): small languages whose members are written here from
// their definition (a predicate on the word, checked on every word up to a length), the
// sizes of textbook minimal DFAs, the alphabet rules, and every refusal with its column.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

#include "frontend_test_helpers.hpp"
#include "krc/frontend/regex_reader.hpp"

using namespace krc;
using test::contains;

namespace {

using Word = std::vector<std::string>;
using Language = std::function<bool(const Word&)>;

bool accepts(const Automaton& a, const Word& word) {
  std::vector<LetterId> letters;
  for (const auto& l : word) {
    const long id = a.find_letter(l);
    REQUIRE(id >= 0);
    letters.push_back(static_cast<LetterId>(id));
  }
  const StateId end = a.run(letters).back();
  for (StateId q : a.accepting())
    if (q == end) return true;
  return false;
}

Automaton regex(const std::string& pattern, std::optional<std::vector<std::string>> alphabet) {
  RegexOptions options;
  options.alphabet = std::move(alphabet);
  return regex_automaton(pattern, options);
}

std::string testing_word(const Word& w) {
  std::string s;
  for (const auto& l : w) s += l + " ";
  return s;
}

// Every word over the automaton's letters up to `max_length`: accepted exactly when in `L`.
void check_language(const Automaton& a, const Language& in_language, std::size_t max_length) {
  std::vector<Word> layer{{}};
  std::size_t words = 0;
  for (std::size_t length = 0; length <= max_length; ++length) {
    std::vector<Word> next;
    for (const Word& w : layer) {
      CAPTURE(testing_word(w));
      CHECK(accepts(a, w) == in_language(w));
      ++words;
      for (const auto& l : a.letters()) {
        Word longer = w;
        longer.push_back(l);
        next.push_back(std::move(longer));
      }
    }
    layer = std::move(next);
  }
  CHECK(words > 0);
}

std::size_t count(const Word& w, const std::string& letter) {
  return static_cast<std::size_t>(std::count(w.begin(), w.end(), letter));
}

InputError regex_error(const std::string& pattern,
                       std::optional<std::vector<std::string>> alphabet = std::nullopt) {
  try {
    regex(pattern, std::move(alphabet));
  } catch (const InputError& e) {
    CHECK(e.file() == "--regex");
    return e;
  }
  FAIL("no InputError for " << pattern);
  return InputError("", "", "");
}

}  // namespace

TEST_CASE("regex: a(b|c)*d is a, then b and c in any number, then d") {
  const Automaton a = regex("a(b|c)*d", std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(a.letters() == std::vector<std::string>{"a", "b", "c", "d"});
  check_language(
      a,
      [](const Word& w) {
        if (w.size() < 2 || w.front() != "a" || w.back() != "d") return false;
        for (std::size_t i = 1; i + 1 < w.size(); ++i)
          if (w[i] != "b" && w[i] != "c") return false;
        return true;
      },
      6);
  // Minimal: before a, inside, after d, and dead.
  CHECK(a.state_count() == 4);
  CHECK(a.name() == "regex");
}

TEST_CASE("regex: the operators, each against its definition") {
  const std::vector<std::string> ab{"a", "b"}, abc{"a", "b", "c"};
  check_language(
      regex("(ab)*", ab),
      [](const Word& w) {
        if (w.size() % 2) return false;
        for (std::size_t i = 0; i < w.size(); ++i)
          if (w[i] != (i % 2 ? "b" : "a")) return false;
        return true;
      },
      8);
  check_language(
      regex("a+b?", ab),
      [](const Word& w) {
        const std::size_t as = count(w, "a");
        if (as == 0) return false;
        for (std::size_t i = 0; i < as; ++i)
          if (w[i] != "a") return false;
        return w.size() == as || (w.size() == as + 1 && w.back() == "b");
      },
      7);
  check_language(
      regex("a{2,3}", ab),
      [](const Word& w) { return (w.size() == 2 || w.size() == 3) && count(w, "a") == w.size(); },
      6);
  check_language(
      regex("a{2}", ab),
      [](const Word& w) {
        return w == Word{"a", "a"};
      },
      5);
  check_language(
      regex("a{2,}", ab), [](const Word& w) { return w.size() >= 2 && count(w, "a") == w.size(); },
      6);
  check_language(
      regex("a{,2}", ab), [](const Word& w) { return w.size() <= 2 && count(w, "a") == w.size(); },
      5);
  check_language(
      regex("[^a]*", abc), [](const Word& w) { return count(w, "a") == 0; }, 5);
  check_language(
      regex("[ac]b", abc),
      [](const Word& w) { return w.size() == 2 && w[0] != "b" && w[1] == "b"; }, 4);
  check_language(
      regex(".{3}", abc), [](const Word& w) { return w.size() == 3; }, 5);
  check_language(
      regex("()", ab), [](const Word& w) { return w.empty(); }, 4);
  check_language(
      regex("", ab), [](const Word& w) { return w.empty(); }, 4);
  check_language(
      regex("a|", ab), [](const Word& w) { return w.empty() || w == Word{"a"}; }, 4);
  check_language(
      regex("(?:a|b)b", ab), [](const Word& w) { return w.size() == 2 && w[1] == "b"; }, 4);
  // A star of a starred concatenation: skips may not enter the inner loop (ab*)? is not b.
  check_language(
      regex("(ab*)?", ab),
      [](const Word& w) { return w.empty() || (w[0] == "a" && count(w, "b") == w.size() - 1); }, 6);
  check_language(
      regex("(ab*){2}", ab),
      [](const Word& w) { return count(w, "a") == 2 && !w.empty() && w[0] == "a"; }, 7);
  // Lazy quantifiers match the same words as greedy ones under full matching.
  const Automaton lazy = regex("a*?b+?", ab), greedy = regex("a*b+", ab);
  CHECK(lazy.transitions() == greedy.transitions());
  CHECK(lazy.accepting() == greedy.accepting());
}

TEST_CASE("regex: minimal DFAs of textbook languages") {
  // (a|b)*abb: the dragon book's example, 4 states minimal.
  const Automaton abb = regex("(a|b)*abb", std::vector<std::string>{"a", "b"});
  CHECK(abb.state_count() == 4);
  check_language(
      abb,
      [](const Word& w) {
        return w.size() >= 3 && w[w.size() - 3] == "a" && w[w.size() - 2] == "b" && w.back() == "b";
      },
      8);
  // (a*)* is a*: one state, accepting.
  const Automaton star = regex("(a*)*", std::vector<std::string>{"a"});
  CHECK(star.state_count() == 1);
  CHECK(star.accepting().size() == 1);
  // The n-th letter from the end is a: 2^n states (here n = 3).
  CHECK(regex("(a|b)*a(a|b){2}", std::vector<std::string>{"a", "b"}).state_count() == 8);
  // The empty language: one rejecting state.
  const Automaton none = regex("[^ab]", std::vector<std::string>{"a", "b"});
  CHECK(none.state_count() == 1);
  CHECK(none.accepting().empty());
}

TEST_CASE("regex: the alphabet is the declared one, else the pattern's letters in order") {
  CHECK(regex("ba|c", std::nullopt).letters() == std::vector<std::string>{"b", "a", "c"});
  CHECK(regex("[^x]y", std::nullopt).letters() == std::vector<std::string>{"x", "y"});
  CHECK(regex("[a-d]", std::nullopt).letters() == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(regex("x", std::vector<std::string>{"y", "x"}).letters() ==
        std::vector<std::string>{"y", "x"});
  // A range over a declared alphabet names the letters that fall in it.
  check_language(
      regex("[b-c]", std::vector<std::string>{"a", "b", "c", "d"}),
      [](const Word& w) { return w.size() == 1 && (w[0] == "b" || w[0] == "c"); }, 3);
  // Letters of several characters are written <name>; escapes make punctuation a letter.
  const Automaton tcp = regex("<SYN>(<ACK>|<FIN>)*", std::vector<std::string>{"SYN", "ACK", "FIN"});
  check_language(
      tcp, [](const Word& w) { return !w.empty() && w[0] == "SYN" && count(w, "SYN") == 1; }, 4);
  CHECK(regex("\\*\\(\\<", std::nullopt).letters() == std::vector<std::string>{"*", "(", "<"});
  CHECK(regex("λμ", std::nullopt).letters() == std::vector<std::string>{"λ", "μ"});
  // An empty alphabet: the only word is the empty one.
  CHECK(regex("()", std::nullopt).letter_count() == 0);
  CHECK(parse_alphabet_list("a,b,c") == std::vector<std::string>{"a", "b", "c"});
  CHECK(parse_alphabet_list("SYN,ACK") == std::vector<std::string>{"SYN", "ACK"});
}

TEST_CASE("regex: every refusal names the column and the problem") {
  struct Case {
    std::string pattern, column, problem;
  };
  const std::vector<Case> cases{
      {"a(b", "column 2", "not closed"},
      {"ab)", "column 3", "unbalanced ')'"},
      {"*a", "column 1", "nothing to repeat"},
      {"a|+", "column 3", "nothing to repeat"},
      {"a**", "column 3", "quantifier after a quantifier"},
      {"a{2}{3}", "column 5", "quantifier after a quantifier"},
      {"a{3,1}", "column 2", "out of order"},
      {"a{1001}", "column 3", "above 1000"},
      {"a{x}", "column 2", "'{' starts a repetition"},
      {"[ab", "column 1", "'[' is not closed"},
      {"[z-a]", "column 3", "out of order"},
      {"a\\d", "column 2", "not supported"},
      {"(a)\\1", "column 4", "backreferences"},
      {"ab\\", "column 3", "escapes nothing"},
      {"^ab", "column 1", "anchors"},
      {"ab$", "column 3", "anchors"},
      {"(?=a)", "column 1", "not supported"},
      {"<ab", "column 1", "no '>' closes"},
      {"a<>", "column 2", "names no letter"},
      {"λ(", "column 2", "not closed"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.pattern);
    const InputError e = regex_error(c.pattern);
    CHECK(e.place() == c.column);
    CHECK(contains(e.problem(), c.problem));
  }
  // A letter outside the declared alphabet, with the hint for letters of several characters.
  const InputError outside = regex_error("ab", std::vector<std::string>{"ab"});
  CHECK(outside.place() == "column 1");
  CHECK(contains(outside.problem(), "'a' is not a letter of the alphabet ('ab')"));
  CHECK(contains(outside.problem(), "<name>"));
  CHECK(contains(regex_error("a\xFF").problem(), "UTF-8"));
  CHECK(contains(regex_error("<\\<bos\\>>").problem(), "reserved"));
  for (const std::string list : {"a,,b", "a,b,a", "<bos>", "a,\xFF"}) {
    CAPTURE(list);
    CHECK_THROWS_AS(parse_alphabet_list(list), InputError);
  }
}

TEST_CASE("regex: hostile patterns stop at a bound, not at the stack or the memory") {
  // Groups nest at most 100 deep.
  const std::string deep_ok = std::string(100, '(') + "a" + std::string(100, ')');
  CHECK(regex(deep_ok, std::nullopt).state_count() == 3);
  const std::string too_deep = std::string(20000, '(') + "a" + std::string(20000, ')');
  const InputError deep = regex_error(too_deep);
  CHECK(deep.place() == "column 101");
  CHECK(contains(deep.problem(), "nested more than 100 deep"));
  // The pattern's length.
  CHECK(contains(regex_error(std::string(kMaxRegexLength + 1, 'a')).problem(), "65,536"));
  // Repetitions multiply: a million NFA states are refused before any is built.
  CHECK_THROWS_WITH_AS(regex("((a{1000}){1000}){1000}", std::nullopt),
                       doctest::Contains("repetitions multiply"), LimitError);
  // The subset construction's bound: the 13th letter from the end needs 2^13 states.
  RegexOptions small;
  small.max_subset_states = 1000;
  CHECK_THROWS_WITH_AS(regex_automaton("(a|b)*a(a|b){12}", small),
                       doctest::Contains("--max-subset-states"), LimitError);
  // A range of an inferred alphabet.
  CHECK(contains(regex_error("[\x01-\xF4\x8F\xBF\xBF]").problem(), "more than 65,536"));
}

TEST_CASE("regex: load_automaton takes --regex and --alphabet, an acceptor however small") {
  LoadOptions options;
  options.regex = "a(b|c)*d";
  options.alphabet = "a,b,c,d";
  MachineOutputs outputs;
  options.completion.outputs = &outputs;
  const Automaton a = load_automaton("", options);
  CHECK(a == regex("a(b|c)*d", std::vector<std::string>{"a", "b", "c", "d"}));
  CHECK(default_output(a, outputs) == OutputKind::Accepting);
  // The empty language has no accepting state, and is still an acceptor.
  options.regex = "[^abcd]";
  const Automaton none = load_automaton("", options);
  CHECK(none.accepting().empty());
  CHECK(default_output(none, outputs) == OutputKind::Accepting);
}
