// From a parsed regular expression to its minimal DFA (regex_reader.hpp): Thompson's
// construction gives an NFA with epsilon moves, the subset construction that reads NFA files
// (subset_construction.hpp) determinises it, and the Moore refinement that every compiled
// output goes through (machine_outputs.hpp) minimises it modulo acceptance: the reachable
// states of a complete DFA, merged where no word tells them apart, is the minimal DFA.
#include <set>

#include "krc/automata/automaton_builder.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/machine_outputs.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/subset_construction.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/frontend/regex_reader.hpp"
#include "regex_syntax.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

using frontend::RegexNode;
using Kind = RegexNode::Kind;

// The NFA states Thompson::build makes for `node`, saturating: checked against the limit before
// anything is built, since nested repetitions multiply ((a{1000}){1000} is two million states).
std::uint64_t nfa_states(const RegexNode& node) {
  switch (node.kind) {
    case Kind::Empty:
      return 1;
    case Kind::Letters:
      return 2;
    case Kind::Concat:
    case Kind::Alternation: {
      std::uint64_t sum = node.kind == Kind::Alternation ? 2 : 0;
      for (const RegexNode& child : node.children) sum = saturating_add(sum, nfa_states(child));
      return sum;
    }
    case Kind::Repeat: {
      const std::uint64_t x = nfa_states(node.children.front());
      const std::uint64_t tail =
          node.unbounded ? saturating_add(x, 1) : saturating_mul(node.max - node.min, x + 1);
      return saturating_add(saturating_add(1, saturating_mul(node.min, x)), tail);
    }
  }
  return 0;
}

// Thompson's construction into an Nfa's tables: each fragment has one entry and one exit.
class Thompson {
 public:
  Thompson(Nfa& nfa, std::size_t letters) : nfa_(nfa), letters_(letters) {}

  struct Fragment {
    StateId start, end;
  };

  Fragment build(const RegexNode& node) {
    switch (node.kind) {
      case Kind::Empty: {
        const StateId s = state();
        return {s, s};
      }
      case Kind::Letters: {
        const StateId s = state(), e = state();
        if (!node.negated) {
          for (LetterId l : node.letters) nfa_.targets[l][s].push_back(e);
          return {s, e};
        }
        // node.letters is sorted: every letter but those.
        auto skip = node.letters.begin();
        for (LetterId l = 0; l < letters_; ++l) {
          if (skip != node.letters.end() && *skip == l) {
            ++skip;
            continue;
          }
          nfa_.targets[l][s].push_back(e);
        }
        return {s, e};
      }
      case Kind::Concat: {
        Fragment f = build(node.children.front());
        for (std::size_t i = 1; i < node.children.size(); ++i) {
          const Fragment g = build(node.children[i]);
          epsilon(f.end, g.start);
          f.end = g.end;
        }
        return f;
      }
      case Kind::Alternation: {
        const StateId s = state(), e = state();
        for (const RegexNode& child : node.children) {
          const Fragment g = build(child);
          epsilon(s, g.start);
          epsilon(g.end, e);
        }
        return {s, e};
      }
      case Kind::Repeat: {
        const RegexNode& x = node.children.front();
        const StateId s = state();
        StateId at = s;
        for (std::size_t i = 0; i < node.min; ++i) {  // the copies that must match
          const Fragment g = build(x);
          epsilon(at, g.start);
          at = g.end;
        }
        if (node.unbounded) {  // a hub that enters x and to which x returns: x*
          const StateId hub = state();
          epsilon(at, hub);
          const Fragment g = build(x);
          epsilon(hub, g.start);
          epsilon(g.end, hub);
          return {s, hub};
        }
        // Each optional copy ends in a fresh state that its skip also reaches: a skip into
        // x's own exit could enter a loop inside x (the hub of a star).
        for (std::size_t i = node.min; i < node.max; ++i) {
          const Fragment g = build(x);
          const StateId e = state();
          epsilon(at, g.start);
          epsilon(g.end, e);
          epsilon(at, e);
          at = e;
        }
        return {s, at};
      }
    }
    return {0, 0};
  }

 private:
  Nfa& nfa_;
  std::size_t letters_;

  StateId state() {
    const auto id = static_cast<StateId>(nfa_.states.size());
    nfa_.states.push_back(std::to_string(id));
    for (auto& row : nfa_.targets) row.emplace_back();
    nfa_.epsilon.emplace_back();
    return id;
  }
  void epsilon(StateId from, StateId to) { nfa_.epsilon[from].push_back(to); }
};

void check_alphabet(const std::vector<std::string>& letters, const std::string& source) {
  std::set<std::string> seen;
  if (letters.size() > kMaxRegexLetters)
    throw InputError(source, "",
                     "more than " + with_thousands(static_cast<long long>(kMaxRegexLetters)) +
                         " letters (krc's limit for a regular expression's alphabet)");
  for (const std::string& letter : letters) {
    if (letter.empty()) throw InputError(source, "", "an empty letter");
    if (letter == kReservedLetter)
      throw InputError(source, "",
                       "the letter name '" + letter +
                           "' is reserved: a compiled network's token 0 is <bos>, the start of "
                           "every word");
    // Letters go into JSON (the weights file's metadata), which holds only UTF-8 text.
    if (auto problem = frontend::invalid_utf8_problem(letter, "the letter"))
      throw InputError(source, "", *problem);
    if (!seen.insert(letter).second)
      throw InputError(source, "", "the letter '" + letter + "' is listed twice");
  }
}

}  // namespace

std::vector<std::string> parse_alphabet_list(const std::string& list, const std::string& source) {
  std::vector<std::string> letters;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    letters.push_back(list.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (list.empty()) letters.clear();  // --alphabet '': no letters
  check_alphabet(letters, source);
  return letters;
}

Automaton regex_automaton(const std::string& pattern, const RegexOptions& options) {
  if (options.alphabet) check_alphabet(*options.alphabet, options.source);
  frontend::ParsedRegex parsed = frontend::parse_regex(pattern, options.alphabet, options.source);
  const std::size_t letters = parsed.alphabet.size();
  const std::uint64_t states = nfa_states(parsed.root);
  if (states > kMaxRegexNfaStates)
    throw LimitError(
        options.source + ": the pattern's NFA would have " +
        (states > std::uint64_t{1} << 62 ? std::string("more than 2^62")
                                         : with_thousands(static_cast<long long>(states))) +
        " states, more than " + with_thousands(static_cast<long long>(kMaxRegexNfaStates)) +
        " (krc's limit; repetitions multiply: {m,n} copies its operand n times)");
  // The Nfa keeps a target list per state and letter, and a name per state.
  check_memory("the NFA of the regular expression",
               saturating_mul(states, saturating_add(saturating_mul(letters, 24), 64)));
  Nfa nfa;
  nfa.name = options.name;
  nfa.letters = parsed.alphabet;
  nfa.targets.resize(letters);
  Thompson thompson(nfa, letters);
  const Thompson::Fragment whole = thompson.build(parsed.root);
  nfa.initial = whole.start;
  nfa.accepting = {whole.end};
  const Automaton dfa = determinise(nfa, options.max_subset_states);
  Automaton minimal = output_machine(dfa, {}, OutputKind::Accepting).automaton;
  return Automaton(options.name, minimal.states(), minimal.letters(), minimal.transitions(),
                   minimal.initial(), minimal.accepting(), "the regular expression " + pattern);
}

}  // namespace krc
