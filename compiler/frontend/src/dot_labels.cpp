#include "dot_labels.hpp"

#include <cctype>
#include <cstdlib>

#include "text.hpp"

namespace krc::frontend {

namespace {

// "a / x" and "a/x" (Mealy machines) read the input a.
std::string mealy_input(const std::string& label) { return trim(label.substr(0, label.find('/'))); }

// The text of an HTML fragment: tags dropped, the entities Graphviz knows by name for
// ASCII decoded, numeric references below 128 decoded (others kept as written).
std::string html_text(const std::string& html) {
  std::string out;
  for (std::size_t i = 0; i < html.size(); ++i) {
    if (html[i] == '<') {
      std::size_t close = html.find('>', i);
      if (close == std::string::npos) break;
      i = close;
      continue;
    }
    if (html[i] == '&') {
      std::size_t semi = html.find(';', i);
      if (semi != std::string::npos && semi - i <= 8) {
        const std::string name = html.substr(i + 1, semi - i - 1);
        static const std::pair<const char*, char> named[] = {
            {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}, {"nbsp", ' '}};
        bool done = false;
        for (const auto& [entity, c] : named)
          if (name == entity) {
            out += c;
            done = true;
          }
        if (!done && name.size() > 1 && name[0] == '#') {
          long code = name[1] == 'x' || name[1] == 'X' ? std::strtol(name.c_str() + 2, nullptr, 16)
                                                       : std::strtol(name.c_str() + 1, nullptr, 10);
          if (code > 0 && code < 128) {
            out += static_cast<char>(code);
            done = true;
          }
        }
        if (done) {
          i = semi;
          continue;
        }
      }
    }
    out += html[i];
  }
  return out;
}

// A decimal number in [0, 1] written as digits with at most one point ("1", "0.9", ".5").
std::optional<double> probability(const std::string& s) {
  if (s.empty() || s.size() > 32) return std::nullopt;
  int points = 0, digits = 0;
  for (char c : s) {
    if (c == '.')
      ++points;
    else if (std::isdigit(static_cast<unsigned char>(c)))
      ++digits;
    else
      return std::nullopt;
  }
  if (points > 1 || digits == 0) return std::nullopt;
  const double p = std::strtod(s.c_str(), nullptr);
  if (p < 0 || p > 1) return std::nullopt;
  return p;
}

}  // namespace

std::vector<std::string> edge_inputs(const std::string& label, bool html) {
  if (!html || label.size() < 2 || label.front() != '<' || label.back() != '>')
    return {mealy_input(label)};
  const std::string body = label.substr(1, label.size() - 2);
  const std::size_t br = lowercase(body).find("<br");
  if (br == std::string::npos) return {mealy_input(html_text(body))};
  const std::string inputs = html_text(body.substr(0, br));
  std::vector<std::string> out;
  for (std::size_t start = 0;;) {
    const std::size_t bar = inputs.find('|', start);
    out.push_back(trim(inputs.substr(start, bar - start)));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

std::optional<std::string> edge_output(const std::string& label, bool html) {
  if (!html || label.size() < 2 || label.front() != '<' || label.back() != '>') {
    const std::size_t slash = label.find('/');
    if (slash == std::string::npos) return std::nullopt;
    return trim(label.substr(slash + 1));
  }
  const std::string body = label.substr(1, label.size() - 2);
  const std::size_t br = lowercase(body).find("<br");
  if (br == std::string::npos) return edge_output(html_text(body), false);
  const std::size_t close = body.find('>', br);
  return trim(html_text(close == std::string::npos ? "" : body.substr(close + 1)));
}

std::optional<std::size_t> pushdown_label(const std::vector<std::string>& labels) {
  std::optional<std::size_t> first;
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const auto output = edge_output(labels[k], false);
    if (!output) continue;
    const bool stack = output->size() > 5 && output->back() == ')' &&
                       (output->rfind("push(", 0) == 0 || output->rfind("pop(", 0) == 0);
    if (!stack) return std::nullopt;
    if (!first) first = k;
  }
  return first;
}

std::optional<std::pair<std::string, std::string>> moore_label(const std::string& label,
                                                               const std::string& shape) {
  std::string text = trim(label);
  const bool record = lowercase(shape) == "record" || lowercase(shape) == "mrecord";
  if (record && text.size() >= 2 && text.front() == '{' && text.back() == '}')
    text = trim(text.substr(1, text.size() - 2));
  const std::size_t bar = record ? text.find('|') : text.find(" / ");
  if (bar == std::string::npos) return std::nullopt;
  std::string name = trim(text.substr(0, bar)), output = trim(text.substr(bar + (record ? 1 : 3)));
  if (name.empty()) return std::nullopt;
  return std::make_pair(std::move(name), std::move(output));
}

std::string html_label_text(const std::string& label) {
  if (label.size() < 2 || label.front() != '<' || label.back() != '>') return trim(label);
  return trim(html_text(label.substr(1, label.size() - 2)));
}

ProbabilityReading read_probability_label(const std::string& label) {
  const std::string text = trim(label);
  if (auto p = probability(text)) return {ProbabilisticLabel::MarkovChain, *p};
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || trim(text.substr(0, colon)).empty()) return {};
  auto p = probability(trim(text.substr(colon + 1)));
  if (!p) return {};
  const bool mealy = text.find('/') < colon;
  return {mealy ? ProbabilisticLabel::StochasticMealy : ProbabilisticLabel::Mdp, *p};
}

std::string describe(ProbabilisticLabel kind) {
  switch (kind) {
    case ProbabilisticLabel::Mdp:
      return "a Markov decision process (AALpy's MDP format: edge labels 'input:probability')";
    case ProbabilisticLabel::StochasticMealy:
      return "a stochastic Mealy machine (AALpy's format: edge labels "
             "'input/output:probability')";
    case ProbabilisticLabel::MarkovChain:
      return "a Markov chain (edge labels are probabilities)";
    case ProbabilisticLabel::None:
      break;
  }
  return "a deterministic automaton";
}

std::optional<std::string> pautomac_symbol(const std::string& label) {
  std::size_t cut = label.find('\n'), skip = 1;
  const std::size_t escaped = label.find("\\n");
  if (escaped != std::string::npos && (cut == std::string::npos || escaped < cut))
    cut = escaped, skip = 2;
  if (cut == std::string::npos) return std::nullopt;
  const std::string symbol = trim(label.substr(0, cut)), count = trim(label.substr(cut + skip));
  if (symbol.empty() || count.empty() || count.size() > 19) return std::nullopt;
  for (char c : count)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  for (char c : symbol)
    if (std::isspace(static_cast<unsigned char>(c))) return std::nullopt;
  return symbol;
}

}  // namespace krc::frontend
