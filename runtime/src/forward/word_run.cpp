// parse_word and run_word (word_run.hpp): what `krc run` and Network.run share.
#include "krc/runtime/word_run.hpp"

#include <algorithm>
#include <limits>

#include "krc/automata/automaton.hpp"
#include "krc/automata/input_error.hpp"

namespace krc {

namespace {

// Tabs alone separate when there is one (letters may then hold spaces and commas); else
// spaces and the commas outside brackets do, so that "SYN(V,V,0),ACK(V,V,0)" is two letters.
std::vector<std::string> split_letters(const std::string& s) {
  const bool tabs = s.find('\t') != std::string::npos;
  std::vector<std::string> parts;
  std::string part;
  int depth = 0;  // brackets open at this character
  for (char c : s) {
    const bool separator =
        tabs ? c == '\t' : c == ' ' || c == '\n' || c == '\r' || (c == ',' && depth == 0);
    if (!tabs && (c == '(' || c == '[' || c == '{')) ++depth;
    if (!tabs && (c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (separator) {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  return parts;
}

// A piece that is a letter, or spells one-character letters; else InputError.
void read_piece(const std::string& token, const Automaton& automaton, const std::string& place,
                std::vector<LetterId>& word) {
  if (long a = automaton.find_letter(token); a >= 0) {
    word.push_back(static_cast<LetterId>(a));
    return;
  }
  std::vector<LetterId> spelled;
  for (char c : token)
    if (long a = automaton.find_letter(std::string(1, c)); a >= 0)
      spelled.push_back(static_cast<LetterId>(a));
  if (!token.empty() && spelled.size() == token.size()) {
    word.insert(word.end(), spelled.begin(), spelled.end());
    return;
  }
  std::string alphabet;
  for (const auto& l : automaton.letters()) alphabet += (alphabet.empty() ? "" : ", ") + l;
  throw InputError(place, "letter \"" + token + "\"",
                   "not in the network's alphabet (" +
                       (automaton.letter_count() == 0 ? empty_alphabet_clause() : alphabet) + ")");
}

}  // namespace

std::vector<LetterId> parse_word(const std::vector<std::string>& arguments,
                                 const Automaton& automaton, const std::string& place) {
  std::vector<LetterId> word;
  for (const auto& argument : arguments) {
    if (long a = automaton.find_letter(argument); a >= 0) {
      word.push_back(static_cast<LetterId>(a));
      continue;
    }
    // An empty argument (or blanks alone) is the empty word, as `krc run FILE ""` asks.
    for (const auto& token : split_letters(argument)) read_piece(token, automaton, place, word);
  }
  return word;
}

bool WordRun::right() const {
  return states == expected &&
         std::all_of(margins.begin(), margins.end(), [](double m) { return m > 0; });
}

void check_word_length(const Network& network, std::size_t letters, const std::string& place) {
  if (static_cast<long long>(letters) > network.max_len)
    throw InputError(place, "letters",
                     std::to_string(letters) + " letters, more than the network's max_len " +
                         std::to_string(network.max_len));
}

WordRun run_word(const Network& network, const Automaton& automaton, std::vector<LetterId> word,
                 const ForwardOptions& options, const std::string& place) {
  check_word_length(network, word.size(), place);  // before preparing anything
  return run_word(ForwardPass(network, options), automaton, std::move(word), place);
}

WordRun run_word(const ForwardPass& pass, const Automaton& automaton, std::vector<LetterId> word,
                 const std::string& place) {
  check_word_length(pass.network(), word.size(), place);
  WordRun r;
  r.options = pass.options();
  r.logits = pass.run(word);
  r.expected = automaton.run(word);
  r.word = std::move(word);
  for (Eigen::Index t = 0; t < r.logits.rows(); ++t) {
    Eigen::Index best = 0;
    r.logits.row(t).maxCoeff(&best);
    double second = -std::numeric_limits<double>::infinity();
    for (Eigen::Index s = 0; s < r.logits.cols(); ++s)
      if (s != best) second = std::max(second, r.logits(t, s));
    r.states.push_back(static_cast<StateId>(best));
    r.margins.push_back(r.logits(t, best) - second);
  }
  return r;
}

}  // namespace krc
