#include "krc/frontend/gff_reader.hpp"

#include <boost/property_tree/ptree.hpp>
#include <map>
#include <sstream>
#include <vector>

#include "jflap_machine.hpp"
#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"
#include "valuations.hpp"
#include "xml_nesting.hpp"

namespace krc {

namespace {

namespace pt = boost::property_tree;
using frontend::line_place;
using frontend::lowercase;
using frontend::trim;

constexpr std::size_t kMaxGffPropositions = 12;  // 4,096 letters, as for HOA

// GOAL writes <StateSet> and <stateSet>, <Label> and <label>: element names ignore case.
struct Element {
  std::string tag;  // as written, for finding its line
  const pt::ptree* tree;
};

std::vector<Element> children(const pt::ptree& parent, const std::string& name) {
  std::vector<Element> found;
  for (const auto& [key, child] : parent)
    if (lowercase(key) == name) found.push_back({key, &child});
  return found;
}

const pt::ptree* child(const pt::ptree& parent, const std::string& name) {
  const auto found = children(parent, name);
  return found.empty() ? nullptr : found.front().tree;
}

std::string attribute(const pt::ptree& element, const std::string& name) {
  if (const pt::ptree* attributes = child(element, "<xmlattr>"))
    if (const pt::ptree* value = child(*attributes, name)) return trim(value->data());
  return "";
}

class GffReader {
 public:
  GffReader(const std::string& text, AutomatonBuilder& b, const CompletionOptions& options)
      : text_(text), b_(b), options_(options) {}

  void read(const pt::ptree& structure) {
    const std::string type = attribute(structure, "type");
    if (lowercase(type) != "fa" && lowercase(type) != "finitestateautomaton")
      b_.fail(line_of_tag("structure", 0),
              "a GOAL <structure type=\"" + type.substr(0, 40) +
                  "\">: krc reads finite-state automata (type \"fa\" or "
                  "\"FiniteStateAutomaton\")");
    const std::string label_on = lowercase(attribute(structure, "label-on"));
    if (!label_on.empty() && label_on != "transition")
      b_.fail(line_of_tag("structure", 0), "a GOAL automaton labelled on its " + label_on +
                                               "s (label-on=\"" + label_on +
                                               "\"): krc reads automata labelled on transitions");
    read_alphabet(structure);
    read_states(structure);
    read_initial(structure);
    read_transitions(structure);
    read_acceptance(structure);
  }

 private:
  const std::string& text_;
  AutomatonBuilder& b_;
  const CompletionOptions& options_;
  bool propositional_ = false;
  std::vector<std::string> propositions_;
  std::map<std::string, std::vector<std::size_t>> tag_lines_;

  // The line of the k-th <tag ...> as written (any case), or "" when the scan does not find it.
  std::string line_of_tag(const std::string& tag, std::size_t k) {
    auto it = tag_lines_.find(tag);
    if (it == tag_lines_.end()) {
      std::vector<std::size_t> lines;
      // The scan matches the case as written: look for the usual spellings.
      for (const std::string& spelling :
           {tag, std::string(1, static_cast<char>(std::toupper(tag[0]))) + tag.substr(1)}) {
        const auto found = frontend::start_tag_lines(text_, spelling, 0);
        if (!found.empty()) {
          lines = found;
          break;
        }
      }
      it = tag_lines_.emplace(tag, std::move(lines)).first;
    }
    return k < it->second.size() ? line_place(it->second[k]) : "";
  }

  StateId state(const std::string& sid, const std::string& place) {
    auto q = b_.find_state(sid);
    if (!q) b_.fail(place, "'" + sid.substr(0, 40) + "' is not the sid of a <state>");
    return *q;
  }

  void read_alphabet(const pt::ptree& structure) {
    const pt::ptree* alphabet = child(structure, "alphabet");
    if (!alphabet) b_.fail(line_of_tag("structure", 0), "no <alphabet> in the GOAL automaton");
    const std::string type = lowercase(attribute(*alphabet, "type"));
    const std::string place = line_of_tag("alphabet", 0);
    if (type == "propositional") {
      propositional_ = true;
      for (const char* tag : {"prop", "proposition"})
        for (const auto& p : children(*alphabet, tag)) {
          const std::string name = trim(p.tree->data());
          if (name.empty()) b_.fail(place, "an empty proposition");
          if (auto problem = frontend::invalid_utf8_problem(name, "proposition"))
            b_.fail(place, *problem);
          if (std::find(propositions_.begin(), propositions_.end(), name) != propositions_.end())
            b_.fail(place, "the proposition '" + name + "' is listed twice");
          propositions_.push_back(name);
          if (propositions_.size() > kMaxGffPropositions)
            b_.fail(place, "more than " + std::to_string(kMaxGffPropositions) +
                               " propositions: krc reads at most that many (2^" +
                               std::to_string(kMaxGffPropositions) + " letters)");
        }
      const std::uint32_t valuations = std::uint32_t{1} << propositions_.size();
      for (std::uint32_t v = 0; v < valuations; ++v)
        b_.add_letter(frontend::valuation_letter(v, propositions_), place);
    } else if (type == "classical") {
      for (const auto& s : children(*alphabet, "symbol")) {
        const std::string letter = trim(s.tree->data());
        if (auto problem = frontend::invalid_utf8_problem(letter, "symbol"))
          b_.fail(place, *problem);
        b_.add_letter(letter, place);
      }
    } else {
      b_.fail(place, "an <alphabet type=\"" + type.substr(0, 40) +
                         "\">: krc reads \"classical\" and \"propositional\" alphabets");
    }
  }

  void read_states(const pt::ptree& structure) {
    const pt::ptree* states = child(structure, "stateset");
    if (!states) b_.fail(line_of_tag("structure", 0), "no <stateSet> in the GOAL automaton");
    std::size_t k = 0;
    for (const auto& s : children(*states, "state")) {
      const std::string place = line_of_tag("state", k++);
      const std::string sid = attribute(*s.tree, "sid");
      if (sid.empty()) b_.fail(place, "a <state> without a sid");
      if (auto problem = frontend::invalid_utf8_problem(sid, "sid")) b_.fail(place, *problem);
      b_.add_state(sid, place);
    }
  }

  void read_initial(const pt::ptree& structure) {
    const pt::ptree* initial = child(structure, "initialstateset");
    if (!initial) return;  // the builder names the first state and says so
    const std::string place = line_of_tag("initialStateSet", 0);
    bool first = true;
    for (const auto& s : children(*initial, "stateid")) {
      const StateId q = state(trim(s.tree->data()), place);
      if (first)
        b_.set_initial(q, place);
      else
        b_.add_initial(q, place);
      first = false;
    }
  }

  // The valuations a label "~g0 r0" (or "True") allows, as bits of a table.
  std::vector<std::uint32_t> valuations(const std::string& label, const std::string& place) {
    std::istringstream in(label);
    std::string literal;
    std::uint32_t must_set = 0, must_clear = 0;
    bool any = false;
    while (in >> literal) {
      any = true;
      if (lowercase(literal) == "true") continue;
      if (lowercase(literal) == "false") return {};
      const bool negative = literal[0] == '~' || literal[0] == '!';
      const std::string p = negative ? literal.substr(1) : literal;
      const auto it = std::find(propositions_.begin(), propositions_.end(), p);
      if (it == propositions_.end())
        b_.fail(place, "'" + p.substr(0, 40) + "' in the label '" + label.substr(0, 80) +
                           "' is not a proposition of the <alphabet>");
      const std::uint32_t bit = std::uint32_t{1} << (it - propositions_.begin());
      (negative ? must_clear : must_set) |= bit;
    }
    if (!any) b_.fail(place, "an empty label (GOAL writes \"True\" for every valuation)");
    std::vector<std::uint32_t> allowed;
    const std::uint32_t count = std::uint32_t{1} << propositions_.size();
    for (std::uint32_t v = 0; v < count; ++v)
      if ((v & must_set) == must_set && (v & must_clear) == 0) allowed.push_back(v);
    return allowed;
  }

  void read_transitions(const pt::ptree& structure) {
    const pt::ptree* transitions = child(structure, "transitionset");
    if (!transitions) return;
    const auto list = children(*transitions, "transition");
    const std::uint64_t per = propositional_ ? std::uint64_t{1} << propositions_.size() : 1;
    check_memory("the " + std::to_string(list.size()) + " transitions of the GOAL file",
                 saturating_mul(saturating_mul(list.size(), per), 160));
    std::size_t k = 0;
    for (const auto& t : list) {
      const std::string place = line_of_tag("transition", k++);
      const pt::ptree* from = child(*t.tree, "from");
      const pt::ptree* to = child(*t.tree, "to");
      const pt::ptree* label = child(*t.tree, "read");
      if (!label) label = child(*t.tree, "label");
      if (!from || !to || !label)
        b_.fail(place, "a <transition> needs <from>, <to> and <read> (or <label>)");
      const StateId p = state(trim(from->data()), place), q = state(trim(to->data()), place);
      const std::string text = trim(label->data());
      if (propositional_) {
        for (std::uint32_t v : valuations(text, place)) b_.add_transition(p, v, q, place);
      } else {
        const auto letter = b_.find_letter(text);
        if (!letter)
          b_.fail(place, text.empty()
                             ? std::string("an empty label (an epsilon move), which the "
                                           "classical alphabet does not have")
                             : "'" + text.substr(0, 40) + "' is not a <symbol> of the <alphabet>");
        b_.add_transition(p, *letter, q, place);
      }
    }
  }

  void read_acceptance(const pt::ptree& structure) {
    const pt::ptree* acc = child(structure, "acc");
    if (!acc) b_.fail(line_of_tag("structure", 0), "no <acc> (acceptance condition) record");
    const std::string type = attribute(*acc, "type");
    const std::string place = line_of_tag("acc", 0);
    if (lowercase(type) != "buchi")
      b_.fail(place, "the acceptance condition <acc type=\"" + type.substr(0, 40) +
                         "\">: krc reads Büchi acceptance for finite words (a run that ends in "
                         "an accepting state); other conditions have no such reading");
    for (const auto& s : children(*acc, "stateid"))
      b_.add_accepting(state(trim(s.tree->data()), place));
    if (options_.note)
      options_.note(b_.file() +
                    ": GOAL's Büchi automaton read for finite words: a word is accepted when a "
                    "run ends in an accepting state (as krc reads HOA's Büchi acceptance)");
  }
};

}  // namespace

Automaton read_gff_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  const pt::ptree document = frontend::read_xml_document(text, b, "XML files");
  const pt::ptree* structure = child(document, "structure");
  if (!structure) b.fail("", "not a GOAL file: the root element must be <structure>");
  GffReader(text, b, options).read(*structure);
  return b.build(options);
}

}  // namespace krc
