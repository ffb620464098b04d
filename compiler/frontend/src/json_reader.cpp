#include "krc/frontend/json_reader.hpp"

#include <nlohmann/json.hpp>
#include <set>

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
  Automaton automaton = automaton_from_json(document, file, options);
  if (document.contains("name")) return automaton;
  return Automaton(default_name, automaton.states(), automaton.letters(), automaton.transitions(),
                   automaton.initial(), automaton.accepting(), automaton.description());
}

}  // namespace krc
