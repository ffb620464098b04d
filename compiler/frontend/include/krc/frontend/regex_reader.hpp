#pragma once
// Regular expressions as automaton descriptions (`krc compile --regex 'a(b|c)*d' --alphabet
// a,b,c,d`, krc.from_regex): the pattern is parsed, turned into an NFA by Thompson's
// construction, determinised by the shared subset construction (subset_construction.hpp) and
// minimised modulo acceptance (machine_outputs.hpp). The result is the minimal complete DFA of
// the pattern's language under full matching, its states named "accept", "reject", "accept#2",
// ... and its accepting states the accepting ones. Written in C++ so that the command line and
// the Python package build the same automaton, and so the same bytes, without Python.
//
// The syntax (automata/README.md, "Regular expressions"): letters are single characters
// (UTF-8 code points), or `<name>` for a letter of several characters; concatenation, `|`,
// `*`, `+`, `?`, `{m}`, `{m,n}`, `{m,}`, `{,n}` (lazy forms `*?` ... accepted: a full match's
// language does not depend on laziness), parentheses and `(?:...)`, `()` for the empty word,
// classes `[abc]`, `[^a]`, `[a-d]` over the alphabet, `.` for any letter, `\` before a
// punctuation character for that character. No backreferences, lookaround or anchors: the
// pattern always matches the whole word.
//
// Hostile input: the pattern is at most kMaxRegexLength bytes, groups nest at most
// kMaxRegexDepth deep, repetition bounds are at most kMaxRegexRepeat, the NFA has at most
// kMaxRegexNfaStates states and fits the memory budget, and the subset construction stops at
// max_subset_states. Every problem is an InputError naming `source`, the column (counted in
// characters from 1) and the problem; a limit of the subset construction is a LimitError.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"

namespace krc {

inline constexpr std::size_t kMaxRegexLength = 65536;       // bytes of the pattern
inline constexpr std::size_t kMaxRegexDepth = 100;          // nested groups
inline constexpr std::size_t kMaxRegexRepeat = 1000;        // m and n of {m,n}
inline constexpr std::size_t kMaxRegexNfaStates = 100'000;  // Thompson NFA states
inline constexpr std::size_t kMaxRegexLetters = 65536;      // letters of the alphabet

struct RegexOptions {
  // The letters, in token order; nullopt: the letters the pattern names, in order of first
  // appearance (a range [a-d] names each of its characters).
  std::optional<std::vector<std::string>> alphabet;
  std::string source = "--regex";  // names the pattern in messages (InputError's file)
  std::string name = "regex";      // the automaton's name
  std::size_t max_subset_states = std::size_t{1} << 16;
};

// The minimal DFA of `pattern` (above).
Automaton regex_automaton(const std::string& pattern, const RegexOptions& options = {});

// "a,b,c,d" -> {"a", "b", "c", "d"}: the --alphabet list, comma-separated. An empty letter,
// a letter twice and the reserved letter <bos> are InputErrors naming `source`.
std::vector<std::string> parse_alphabet_list(const std::string& list,
                                             const std::string& source = "--alphabet");

}  // namespace krc
