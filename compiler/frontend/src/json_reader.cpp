#include "krc/frontend/json_reader.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "flexfringe.hpp"
#include "krc/automata/automaton_builder.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/json_depth.hpp"
#include "source_lines.hpp"

namespace krc {

namespace {

using nlohmann::json;

// nlohmann's message after its own "parse error at line L, column C: " (we give the place).
std::string parse_problem(const json::parse_error& e) {
  std::string what = e.what();
  auto column = what.find("column ");
  auto colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  if (colon != std::string::npos) return what.substr(colon + 2);
  auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// JSON itself lets a key repeat and keeps the last value; in a description that silently
// drops a transition list, so it is an error here. Tracks the keys of each open object.
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(const std::string& file) : file_(file) {}

  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    auto d = static_cast<std::size_t>(depth);
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (keys_.size() < d + 2) keys_.resize(d + 2);
        keys_[d + 1].clear();
        if (path_.size() < d + 1) path_.resize(d + 1);
        path_.resize(d + 1);
        if (event == json::parse_event_t::array_start)
          array_depths_.insert(d + 1);
        else
          array_depths_.erase(d + 1);
        break;
      case json::parse_event_t::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        path_.resize(d);
        if (d >= 1) path_[d - 1] = key;
        if (d < keys_.size() && !keys_[d].insert(key).second) {
          json::json_pointer pointer;
          for (std::size_t i = 0; i + 1 < d; ++i)
            pointer /= array_depths_.count(i + 1) ? std::string("-") : path_[i];
          pointer /= key;
          throw InputError(file_, pointer.to_string(),
                           "member \"" + key + "\" appears twice in the same object");
        }
        break;
      }
      default:
        break;
    }
    return true;
  }

 private:
  const std::string& file_;
  std::vector<std::set<std::string>> keys_;  // keys_[d]: keys seen in the open object at depth d
  std::vector<std::string> path_;            // key leading to each depth
  std::set<std::size_t> array_depths_;       // depths whose container is an array
};

// nlohmann reports a number beyond a double's range (1e999) as out_of_range 406, without the
// position its parse errors carry. A second pass with a SAX handler that only listens for the
// error finds it: `offset` is where the offending token starts.
struct ErrorLocator {
  std::size_t offset = 0;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t&) { return true; }
  bool string(json::string_t&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool key(json::string_t&) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t position, const std::string& last_token, const json::exception&) {
    offset =
        position >= last_token.size() ? position - last_token.size() : 0;  // position: just past it
    return false;
  }
};

// FlexFringe's JSON output: members "nodes" (objects with an integer "id"; the root, the
// initial state, has "source" -1) and "edges" (objects with "source" and "target", node ids as
// strings or numbers, and "name", the symbol), "alphabet" the symbols in FlexFringe's order.
// Read as a semiautomaton: the nodes' counts ("data", "label") are statistics of the training
// traces, not an acceptance krc can read, so they are left out (automata/README.md).
bool is_flexfringe_document(const json& d) {
  return d.is_object() && d.contains("nodes") && d.contains("edges") && !d.contains("transitions");
}

Automaton flexfringe_automaton(const json& d, const std::string& file, const std::string& name,
                               const CompletionOptions& options) {
  AutomatonBuilder b(file);
  b.set_name(name);
  b.set_missing_meaning(frontend::kFlexFringeMissing);
  auto id_of = [&](const json& value, const std::string& place) -> std::string {
    if (value.is_number_integer()) return std::to_string(value.get<long long>());
    if (value.is_string()) return value.get<std::string>();
    b.fail(place, "a node id must be an integer or a string");
  };
  const json& nodes = d.at("nodes");
  const json& edges = d.at("edges");
  if (!nodes.is_array()) b.fail("/nodes", "FlexFringe's \"nodes\" must be an array");
  if (!edges.is_array()) b.fail("/edges", "FlexFringe's \"edges\" must be an array");
  if (d.contains("alphabet")) {
    const json& alphabet = d.at("alphabet");
    if (!alphabet.is_array()) b.fail("/alphabet", "FlexFringe's \"alphabet\" must be an array");
    for (std::size_t i = 0; i < alphabet.size(); ++i) {
      const std::string place = "/alphabet/" + std::to_string(i);
      if (!alphabet[i].is_string()) b.fail(place, "a symbol must be a string");
      b.add_letter(alphabet[i].get<std::string>(), place);
    }
  }
  std::optional<StateId> root;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string place = "/nodes/" + std::to_string(i);
    const json& node = nodes[i];
    if (!node.is_object() || !node.contains("id"))
      b.fail(place, "a FlexFringe node must be an object with an \"id\"");
    const StateId q = b.add_state(id_of(node.at("id"), place + "/id"), place);
    if (!root && node.contains("source") && node.at("source").is_number_integer() &&
        node.at("source").get<long long>() == -1)
      root = q;
  }
  if (b.state_count() == 0) b.fail("/nodes", "FlexFringe's model has no nodes");
  b.set_initial(root.value_or(0), root ? "the node whose source is -1" : "/nodes/0");
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const std::string place = "/edges/" + std::to_string(i);
    const json& edge = edges[i];
    if (!edge.is_object() || !edge.contains("source") || !edge.contains("target") ||
        !edge.contains("name") || !edge.at("name").is_string())
      b.fail(place,
             "a FlexFringe edge must be an object with \"source\", \"target\" and a string "
             "\"name\"");
    const StateId from = b.state(id_of(edge.at("source"), place + "/source"), place + "/source");
    const StateId to = b.state(id_of(edge.at("target"), place + "/target"), place + "/target");
    b.add_transition(from, b.letter(edge.at("name").get<std::string>(), place + "/name"), to,
                     place);
  }
  return b.build(options);
}

}  // namespace

Automaton read_json_automaton(const std::string& text, const std::string& file,
                              const std::string& default_name, const CompletionOptions& options) {
  if (auto deep = json_too_deep(text))
    throw InputError(file, frontend::line_column_place(text, *deep), json_depth_problem());
  json document;
  try {
    document = json::parse(text, DuplicateKeyCheck(file));
  } catch (const json::parse_error& e) {
    // e.byte is the 1-based position of the character the parser stopped at.
    std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    throw InputError(file, frontend::line_column_place(text, offset),
                     "not valid JSON: " + parse_problem(e));
  } catch (const json::out_of_range& e) {
    ErrorLocator locator;
    json::sax_parse(text, &locator);
    throw InputError(file, frontend::line_column_place(text, locator.offset),
                     "a number too large for krc (beyond the range of a double)");
  }
  if (is_flexfringe_document(document))
    return flexfringe_automaton(document, file, default_name, options);
  Automaton automaton = automaton_from_json(document, file, options);
  if (document.contains("name")) return automaton;
  return Automaton(default_name, automaton.states(), automaton.letters(), automaton.transitions(),
                   automaton.initial(), automaton.accepting(), automaton.description());
}

}  // namespace krc
