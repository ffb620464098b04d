#pragma once
// Internal to the onelayer strategy: the number the one attention head gives each prefix, in
// exact (real) arithmetic, and the state the prefix reaches. The planner sorts these values,
// finds the runs of one state and bounds how far float32 arithmetic can move a value.
//
// Legend: q0 the initial state, L = max_len, t a prefix's length, j a position (BOS is j = 0),
// d_j the digit of the letter at j (1..D), x = e^-lambda, n_c how often class c occurs.
//
// The head's score depends only on the key's position, so position j gets the weight
// w_j / sum_{i <= t} w_i, and BOS holds the value 0. The value is a weighted mean:
//   LatestFirst:   z = sum_{j=1..t} d_j x^(t-j) / sum_{i=0..t} x^i     (w_j = e^(lambda (j-t)))
//   EarliestFirst: z = sum_{j=1..t} d_j x^j     / sum_{i=0..t} x^i     (w_j = e^(-lambda j))
//   Counts:        z = sum_c n_c (L+1)^(c-1)   (weight exactly 1/(L+1) per letter, times L + 1)
// With x < 1/(D+1) the digits 1..D never carry, so a positional value is a fraction in base
// e^lambda: distinct letter sequences of one length get distinct values, and the values of the
// words ending (LatestFirst) or starting (EarliestFirst) with one digit stay together. Only BOS
// has the digit 0, so no digit sequence is a power of a shorter one: weighted means of a
// repeated block coincide (with 0 for the identity letter, "1" and "1 0 1" would). Values of
// different lengths can still come close; the planner measures every gap it relies on.
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/backend/plan.hpp"

namespace krc {

// Letters grouped by their action on the states, classes in order of first appearance.
struct LetterClasses {
  std::vector<int> of_letter;          // the class of each letter
  std::vector<Transformation> action;  // per class
  std::vector<bool> identity;          // per class: acts as the identity
  bool commute = false;                // every two actions commute
  int size() const { return static_cast<int>(action.size()); }
  int non_identity() const;
};
LetterClasses letter_classes(const Automaton& automaton);

// One way to encode prefixes: the code and the number each class contributes (a digit for the
// positional codes, a count weight (L+1)^i for Counts, 0 for the identity class).
struct CodeChoice {
  ContextCode code = ContextCode::LatestFirst;
  std::vector<int> class_code;
  float sharpness = 0.0f;  // lambda; positional codes only
};

// The choices worth comparing at length L: Counts when the letters commute, else both
// positional orders with every assignment of digits to classes (the identity order alone
// beyond 3 classes), all with the smallest sharpness lambda = k/256 > ln(D+1).
std::vector<CodeChoice> code_choices(const LetterClasses& classes, int max_len);

// The smallest multiple of 1/256 above ln(D+1): the base e^lambda just exceeds D + 1, which
// keeps the values of long prefixes as far apart as float32 needs them.
float positional_sharpness(int digits);

// Every prefix of length <= L (for Counts: every vector of counts with sum <= L) with its
// exact value and the state it reaches from q0.
struct ValueTable {
  std::vector<double> value;
  std::vector<StateId> state;
};

// The number of entries value_table would have (a double: it may be astronomically large).
double value_table_size(const LetterClasses& classes, const CodeChoice& choice, int max_len);
ValueTable value_table(const LetterClasses& classes, StateId initial, const CodeChoice& choice,
                       int max_len);

// How many distinct transformations the prefixes of length <= L induce (the empty prefix's
// identity included): prefixes with one transformation may share a value, so this is the
// fewest values an exact contextual mapping needs. Counting stops past `cap` (returns cap + 1).
long long count_transformations(const LetterClasses& classes, int max_len, long long cap);

}  // namespace krc
