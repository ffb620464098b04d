#include "krc/frontend/etf_reader.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "etf_syntax.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "source_lines.hpp"
#include "text.hpp"
#include "utf8.hpp"

namespace krc {

namespace {

using frontend::EtfGroup;
using frontend::EtfModel;
using frontend::line_place;

std::string key(const std::uint32_t* values, std::size_t n) {
  std::string k(n * sizeof(std::uint32_t), '\0');
  if (n > 0) std::memcpy(k.data(), values, k.size());
  return k;
}

// The line of the edge labels' section, for messages about them ("" when there is none).
std::string edge_section_place(const std::string& text) {
  const auto at = text.find("begin edge");
  return at == std::string::npos ? "" : line_place(frontend::line_of(text, at));
}

// Which edge label spells the letters: the one `named` (an InputError naming the labels the
// file has when it has none of that name); else the only one; else the first whose sort or name
// begins with "action" (LTSmin finds its action label by the sort's prefix); else the first.
// -1: none.
int letter_label(const EtfModel& m, const std::string& named, const std::string& text,
                 const std::string& file) {
  if (!named.empty()) {
    for (std::size_t i = 0; i < m.labels.size(); ++i)
      if (m.labels[i].name == named) return static_cast<int>(i);
    std::string names;
    for (const auto& l : m.labels) names += (names.empty() ? "'" : ", '") + l.name + "'";
    throw InputError(file, edge_section_place(text),
                     "no edge label '" + named + "' (--etf-label): " +
                         (m.labels.empty() ? std::string("the file has no edge labels (its "
                                                         "letters are the transition groups)")
                                           : "the file's edge labels are " + names));
  }
  if (m.labels.size() <= 1) return m.labels.empty() ? -1 : 0;
  for (std::size_t i = 0; i < m.labels.size(); ++i)
    if (m.labels[i].sort.rfind("action", 0) == 0 || m.labels[i].name.rfind("action", 0) == 0)
      return static_cast<int>(i);
  return 0;
}

// Explores the vectors reachable from the initial one, group by group, as LTSmin's
// next-state function (etf-pins.c, etf_short) does: a row of a group applies to a state whose
// values at the group's slots are the row's 'from' values, and sets them to its 'to' values.
class Explorer {
 public:
  Explorer(const EtfModel& m, const std::string& file, std::uint32_t max_states, int label)
      : m_(m), file_(file), max_states_(max_states), label_(label) {
    for (std::size_t g = 0; g < m.groups.size(); ++g) {
      Index& index = index_.emplace_back();
      const EtfGroup& group = m.groups[g];
      for (std::size_t r = 0; r < group.rows.size(); ++r)
        index[key(group.rows[r].from.data(), group.slots.size())].push_back(r);
      for (const auto& row : group.rows)
        row_letters_.push_back(label < 0 ? "group" + std::to_string(g)
                                         : m.value_text(m.labels[label].sort, row.labels[label]));
    }
  }

  EtfSystem run() {
    EtfSystem s;
    if (label_ >= 0) s.letters_from = m_.labels[label_].name;
    for (const auto& l : m_.labels) s.labels.push_back(l.name);
    intern(m_.initial);
    std::unordered_map<std::string, std::uint32_t> letters;
    for (std::uint32_t q = 0; q < states_.size(); ++q) {
      std::vector<std::pair<std::uint32_t, std::uint32_t>> out;  // (letter, to)
      std::size_t row_base = 0;
      for (std::size_t g = 0; g < m_.groups.size(); ++g) {
        const EtfGroup& group = m_.groups[g];
        std::vector<std::uint32_t> projected;
        for (std::uint32_t slot : group.slots) projected.push_back(states_[q][slot]);
        const auto it = index_[g].find(key(projected.data(), projected.size()));
        if (it != index_[g].end())
          for (std::size_t r : it->second) {
            std::vector<std::uint32_t> next = states_[q];
            for (std::size_t j = 0; j < group.slots.size(); ++j)
              next[group.slots[j]] = group.rows[r].to[j];
            const std::string& name = row_letters_[row_base + r];
            const auto [l, added] =
                letters.emplace(name, static_cast<std::uint32_t>(s.letters.size()));
            if (added) s.letters.push_back(name);
            out.emplace_back(l->second, intern(next));
          }
        row_base += group.rows.size();
      }
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      check_memory("the transitions of the ETF model",
                   saturating_mul(s.edges.size() + out.size(), 48));
      for (const auto& [l, to] : out) s.edges.push_back({q, l, to});
    }
    for (const auto& v : states_) {
      std::string name = "<";
      for (std::size_t i = 0; i < v.size(); ++i)
        name += (i ? "," : "") + m_.value_text(m_.slots[i].sort, v[i]);
      s.states.push_back(name + ">");
    }
    return s;
  }

 private:
  using Index = std::unordered_map<std::string, std::vector<std::size_t>>;

  std::uint32_t intern(const std::vector<std::uint32_t>& v) {
    const auto [it, added] = ids_.emplace(key(v.data(), v.size()), states_.size());
    if (!added) return it->second;
    if (states_.size() >= max_states_)
      throw InputError(file_, line_place(m_.initial_line),
                       "more than " + std::to_string(max_states_) +
                           " states are reachable from the initial state: krc reads ETF "
                           "models whose explored state space has at most that many");
    check_memory("the " + std::to_string(states_.size() + 1) + " states of the ETF model",
                 saturating_mul(states_.size() + 1, 2 * 4 * v.size() + 160));
    states_.push_back(v);
    return it->second;
  }

  const EtfModel& m_;
  const std::string& file_;
  std::uint32_t max_states_;
  int label_;  // the edge label that spells the letters; -1: the groups do
  std::vector<Index> index_;
  std::vector<std::string> row_letters_;  // each row's letter, the groups' rows in order
  std::vector<std::vector<std::uint32_t>> states_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

}  // namespace

EtfSystem read_etf_system(const std::string& text, const std::string& file,
                          std::uint32_t max_states, const std::string& label) {
  const EtfModel model = frontend::parse_etf(text, file);
  return Explorer(model, file, max_states, letter_label(model, label, text, file)).run();
}

Automaton read_etf_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options,
                             const std::string& label) {
  const EtfSystem s = read_etf_system(text, file, kMaxEtfStates, label);
  AutomatonBuilder b(file);
  b.set_name(name);
  const std::string place = line_place(1);
  for (std::uint32_t q = 0; q < s.states.size(); ++q) {
    b.add_state(s.states[q], place);
    b.add_accepting(q);  // the language is the system's traces
  }
  b.set_initial(0, place);
  bool internal = false;
  std::vector<std::optional<LetterId>> letters;
  for (const std::string& l : s.letters) {
    if (l == "tau") {
      letters.emplace_back();
      continue;
    }
    if (auto problem = frontend::invalid_utf8_problem(l, "label")) b.fail(place, *problem);
    letters.emplace_back(b.letter(l, place));
  }
  for (const EtfSystem::Edge& e : s.edges) {
    if (letters[e.letter]) {
      b.add_transition(e.from, *letters[e.letter], e.to, place);
    } else {
      b.add_epsilon(e.from, e.to, place);
      internal = true;
    }
  }
  if (options.note && s.labels.size() > 1 && label.empty())
    options.note(file + ": the letters are the values of the edge label '" + s.letters_from +
                 "' (of " + std::to_string(s.labels.size()) +
                 " edge labels; the others are not read; --etf-label names another)");
  if (options.note && s.labels.empty())
    options.note(file + ": no edge labels: the letters are the transition groups (group0, ...)");
  if (internal && options.note) options.note(frontend::internal_action_note(file, "'tau'"));
  return b.build(options);
}

}  // namespace krc
