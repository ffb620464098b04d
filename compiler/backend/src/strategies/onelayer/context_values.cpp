#include "strategies/onelayer/context_values.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace krc {

namespace {

Transformation compose(const Transformation& first, const Transformation& then) {
  Transformation out(first.size());
  for (std::size_t q = 0; q < first.size(); ++q) out[q] = then[first[q]];
  return out;
}

// sum_{i=0..t} x^i for t = 0..L.
std::vector<double> denominators(double x, int max_len) {
  std::vector<double> out(max_len + 1);
  double power = 1.0, sum = 0.0;
  for (int t = 0; t <= max_len; ++t) {
    sum += power;
    out[t] = sum;
    power *= x;
  }
  return out;
}

// Words of length t, then t + 1, ...: the numerators of the positional values grow a digit at
// a time (LatestFirst: n' = n x + d, the new letter weighing 1; EarliestFirst: n' = n + d x^t).
ValueTable positional_table(const LetterClasses& classes, StateId initial, const CodeChoice& choice,
                            int max_len) {
  const double x = std::exp(-static_cast<double>(choice.sharpness));
  const std::vector<double> den = denominators(x, max_len);
  ValueTable table;
  table.value.push_back(0.0);
  table.state.push_back(initial);
  std::vector<double> numerator{0.0};
  std::vector<StateId> state{initial};
  double x_power = 1.0;
  for (int t = 1; t <= max_len; ++t) {
    x_power *= x;
    std::vector<double> next_numerator;
    std::vector<StateId> next_state;
    next_numerator.reserve(numerator.size() * classes.size());
    next_state.reserve(numerator.size() * classes.size());
    for (int c = 0; c < classes.size(); ++c) {
      const double d = choice.class_code[c];
      for (std::size_t w = 0; w < numerator.size(); ++w) {
        next_numerator.push_back(choice.code == ContextCode::LatestFirst
                                     ? numerator[w] * x + d
                                     : numerator[w] + d * x_power);
        next_state.push_back(classes.action[c][state[w]]);
      }
    }
    numerator.swap(next_numerator);
    state.swap(next_state);
    for (std::size_t w = 0; w < numerator.size(); ++w) {
      table.value.push_back(numerator[w] / den[t]);
      table.state.push_back(state[w]);
    }
  }
  return table;
}

// Every count vector with sum <= L, class by class; the letters commute, so the state is the
// initial state acted on by each class as often as it occurs.
void add_counts(const LetterClasses& classes, const CodeChoice& choice, std::size_t c, int budget,
                double value, StateId state, ValueTable& table) {
  if (c == classes.action.size()) {
    table.value.push_back(value);
    table.state.push_back(state);
    return;
  }
  if (classes.identity[c]) return add_counts(classes, choice, c + 1, budget, value, state, table);
  for (int n = 0; n <= budget; ++n) {
    add_counts(classes, choice, c + 1, budget - n, value + double(n) * choice.class_code[c], state,
               table);
    state = classes.action[c][state];
  }
}

}  // namespace

int LetterClasses::non_identity() const {
  return static_cast<int>(std::count(identity.begin(), identity.end(), false));
}

LetterClasses letter_classes(const Automaton& automaton) {
  LetterClasses classes;
  Transformation id(automaton.state_count());
  std::iota(id.begin(), id.end(), StateId{0});
  for (LetterId a = 0; a < automaton.letter_count(); ++a) {
    const Transformation& act = automaton.letter_action(a);
    auto it = std::find(classes.action.begin(), classes.action.end(), act);
    classes.of_letter.push_back(static_cast<int>(it - classes.action.begin()));
    if (it == classes.action.end()) {
      classes.action.push_back(act);
      classes.identity.push_back(act == id);
    }
  }
  classes.commute = true;
  for (const auto& a : classes.action)
    for (const auto& b : classes.action) classes.commute &= compose(a, b) == compose(b, a);
  return classes;
}

float positional_sharpness(int digits) {
  const double threshold = std::log(double(digits) + 1.0);
  return static_cast<float>((std::floor(threshold * 256.0) + 1.0) / 256.0);
}

std::vector<CodeChoice> code_choices(const LetterClasses& classes, int max_len) {
  std::vector<CodeChoice> choices;
  if (classes.commute) {
    CodeChoice counts;
    counts.code = ContextCode::Counts;
    double radix = 1.0;
    for (int c = 0; c < classes.size(); ++c) {
      counts.class_code.push_back(classes.identity[c] ? 0 : static_cast<int>(std::min(radix, 1e9)));
      if (!classes.identity[c]) radix *= max_len + 1.0;
    }
    choices.push_back(counts);
  }
  std::vector<int> digits(classes.size());
  std::iota(digits.begin(), digits.end(), 1);
  const float lambda = positional_sharpness(classes.size());
  do {
    for (ContextCode code : {ContextCode::LatestFirst, ContextCode::EarliestFirst})
      choices.push_back({code, digits, lambda});
  } while (classes.size() <= 3 && std::next_permutation(digits.begin(), digits.end()));
  return choices;
}

double value_table_size(const LetterClasses& classes, const CodeChoice& choice, int max_len) {
  if (choice.code == ContextCode::Counts) {  // C(L + k, k) count vectors of k classes
    const int k = classes.non_identity();
    double n = 1.0;
    for (int i = 1; i <= k; ++i) n = n * (max_len + i) / i;
    return n;
  }
  double total = 0.0, words = 1.0;
  for (int t = 0; t <= max_len && total < 1e300; ++t, words *= classes.size()) total += words;
  return total;
}

long long count_transformations(const LetterClasses& classes, int max_len, long long cap) {
  Transformation id(classes.action.at(0).size());
  std::iota(id.begin(), id.end(), StateId{0});
  std::set<Transformation> seen{id};
  std::vector<Transformation> frontier{id};  // reached first by the prefixes of length t
  for (int t = 1; t <= max_len && !frontier.empty(); ++t) {
    std::vector<Transformation> next;
    for (const auto& f : frontier)
      for (const auto& a : classes.action) {
        Transformation g = compose(f, a);
        if (seen.insert(g).second) next.push_back(std::move(g));
        if (static_cast<long long>(seen.size()) > cap) return cap + 1;
      }
    frontier.swap(next);
  }
  return static_cast<long long>(seen.size());
}

ValueTable value_table(const LetterClasses& classes, StateId initial, const CodeChoice& choice,
                       int max_len) {
  if (choice.code != ContextCode::Counts)
    return positional_table(classes, initial, choice, max_len);
  ValueTable table;
  add_counts(classes, choice, 0, max_len, 0.0, initial, table);
  return table;
}

}  // namespace krc
