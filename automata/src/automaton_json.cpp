#include "krc/automata/automaton_json.hpp"

namespace krc {

using nlohmann::json;

namespace {

std::string pointer(std::initializer_list<std::string> parts) {
  json::json_pointer p;
  for (const auto& part : parts) p /= part;
  return p.to_string();
}

const json& member(const json& object, const char* key, const AutomatonBuilder& b) {
  auto it = object.find(key);
  if (it == object.end()) b.fail("/", std::string("missing member \"") + key + "\"");
  return *it;
}

const std::string& string_at(const json& value, const std::string& place, const AutomatonBuilder& b,
                             const char* what) {
  if (!value.is_string())
    b.fail(place, std::string(what) + " must be a string, not " + value.type_name());
  return value.get_ref<const std::string&>();
}

// A state given by name or by index.
StateId state_ref(const json& value, const std::string& place, const AutomatonBuilder& b) {
  if (value.is_string()) return b.state(value.get<std::string>(), place);
  if (value.is_number_integer()) {
    auto index = value.get<long long>();
    if (index < 0 || static_cast<std::size_t>(index) >= b.state_count())
      b.fail(place, "state index " + std::to_string(index) + " out of range (there are " +
                        std::to_string(b.state_count()) + " states)");
    return static_cast<StateId>(index);
  }
  b.fail(place, std::string("a state must be a name or an index, not ") + value.type_name());
}

}  // namespace

Automaton automaton_from_json(const json& document, const std::string& file,
                              const CompletionOptions& options) {
  AutomatonBuilder b(file);
  if (!document.is_object())
    b.fail("/", std::string("expected a JSON object, found ") + document.type_name());

  if (auto it = document.find("name"); it != document.end())
    b.set_name(string_at(*it, "/name", b, "the name"));
  if (auto it = document.find("description"); it != document.end())
    b.set_description(string_at(*it, "/description", b, "the description"));

  const json& states = member(document, "states", b);
  if (!states.is_array()) b.fail("/states", "must be a list of state names");
  if (states.empty()) b.fail("/states", "the automaton has no states");
  for (std::size_t i = 0; i < states.size(); ++i) {
    auto place = pointer({"states", std::to_string(i)});
    b.add_state(string_at(states[i], place, b, "a state name"), place);
  }

  const json& alphabet = member(document, "alphabet", b);
  if (!alphabet.is_array()) b.fail("/alphabet", "must be a list of letters");
  // An empty alphabet reads: the automaton reads only the empty word (automaton.hpp).
  for (std::size_t i = 0; i < alphabet.size(); ++i) {
    auto place = pointer({"alphabet", std::to_string(i)});
    b.add_letter(string_at(alphabet[i], place, b, "a letter"), place);
  }

  // --initial (options.initial) stands in for a missing "initial" and overrides a present one.
  if (options.initial.empty() && !document.contains("initial"))
    b.fail("/", "missing member \"initial\" (or name the initial state with --initial STATE)");
  if (options.initial.empty() || document.contains("initial"))
    b.set_initial(state_ref(member(document, "initial", b), "/initial", b), "/initial");

  const json& transitions = member(document, "transitions", b);
  if (!transitions.is_object()) b.fail("/transitions", "must map each letter to a list of targets");
  for (const auto& [letter, targets] : transitions.items()) {
    auto letter_place = pointer({"transitions", letter});
    auto a = b.find_letter(letter);
    if (!a) b.fail(letter_place, "letter '" + letter + "' is not in the alphabet");
    if (!targets.is_array()) b.fail(letter_place, "must be a list of targets, one per state");
    if (targets.size() > b.state_count())
      b.fail(letter_place, "lists " + std::to_string(targets.size()) + " targets for " +
                               std::to_string(b.state_count()) + " states");
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (targets[i].is_null()) continue;  // missing: partial automaton
      auto place = pointer({"transitions", letter, std::to_string(i)});
      b.add_transition(static_cast<StateId>(i), *a, state_ref(targets[i], place, b), place);
    }
  }
  // Missing transitions are reported at the letter's list, which is where they belong.
  for (StateId q = 0; q < b.state_count(); ++q)
    b.set_state_place(q, pointer({"states", std::to_string(q)}));

  if (auto it = document.find("accepting"); it != document.end()) {
    if (!it->is_array()) b.fail("/accepting", "must be a list of states");
    for (std::size_t i = 0; i < it->size(); ++i)
      b.add_accepting(state_ref((*it)[i], pointer({"accepting", std::to_string(i)}), b));
  }
  return b.build(options);
}

json automaton_to_json(const Automaton& automaton) {
  json doc = json::object();
  doc["name"] = automaton.name();
  if (!automaton.description().empty()) doc["description"] = automaton.description();
  doc["states"] = automaton.states();
  doc["alphabet"] = automaton.letters();
  doc["initial"] = automaton.state_name(automaton.initial());
  json transitions = json::object();
  for (LetterId a = 0; a < automaton.letter_count(); ++a) {
    json targets = json::array();
    for (StateId q : automaton.letter_action(a)) targets.push_back(automaton.state_name(q));
    transitions[automaton.letter_name(a)] = std::move(targets);
  }
  doc["transitions"] = std::move(transitions);
  if (!automaton.accepting().empty()) {
    json accepting = json::array();
    for (StateId q : automaton.accepting()) accepting.push_back(automaton.state_name(q));
    doc["accepting"] = std::move(accepting);
  }
  return doc;
}

std::string automaton_to_json_text(const Automaton& automaton, int indent) {
  // ordered_json keeps members (and letters) in the order they are added.
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  doc["name"] = automaton.name();
  if (!automaton.description().empty()) doc["description"] = automaton.description();
  doc["states"] = automaton.states();
  doc["alphabet"] = automaton.letters();
  doc["initial"] = automaton.state_name(automaton.initial());
  auto& transitions = doc["transitions"] = nlohmann::ordered_json::object();
  for (LetterId a = 0; a < automaton.letter_count(); ++a) {
    auto& targets = transitions[automaton.letter_name(a)] = nlohmann::ordered_json::array();
    for (StateId q : automaton.letter_action(a)) targets.push_back(automaton.state_name(q));
  }
  if (!automaton.accepting().empty()) {
    auto& accepting = doc["accepting"] = nlohmann::ordered_json::array();
    for (StateId q : automaton.accepting()) accepting.push_back(automaton.state_name(q));
  }
  // Names read from DOT or JFLAP files need not be UTF-8; replace bad bytes, do not throw.
  return doc.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace krc
