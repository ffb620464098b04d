#pragma once
// Parallel prefix (Liu et al., Theorem 1): the state x0 . f_1 . f_2 ... f_t of a set X acted on
// by the transformations of the symbols read so far, in ceil(log2 max_len) steps. Step l
// fetches the prefix element held k = 2^l positions back (BOS holds the identity) and an MLP
// composes it with the current one in place (Hillis-Steele), so the width does not grow with
// the number of steps.
//
// Legend: n = |X|, M the monoid the symbols generate, T = max_len, B = ceil(log2(T + 1)) bits
// of a position code, q0 = x0.
//
// Prefix elements are held in one of three forms (krc/backend/plan.hpp: ScanForm); per step:
//   element one-hot      2|M| dimensions (prefix and fetched copy); one unit per pair of
//                        elements, |M|^2 + |M| (pairs of products longer than 2^l are skipped);
//                        fetch by position codes (B dimensions per step).
//   state map            2 n^2 dimensions (n one-hot blocks, block q the image of q); one unit
//                        per (q, i, j), n^3 + 2 n^2; fetch by position codes.
//   integer coordinates  2n dimensions (coordinate q holds f(q) + 1); 2 n^2 + 2n units
//                        (primitives/integer_compose.hpp), the last step 2n + 1 (only f(q0)
//                        is needed) or 3 n^2 where the result must be a one-hot; fetch by the
//                        position phase (2B - 1 dimensions for all steps). Exact in plain
//                        float32 for n <= 2047 (summed in unit order; in any order for
//                        n <= 202); beyond that the form is not used.
//   binary coordinates   2nb dimensions, b = max(1, ceil(log2 n)) (coordinate (q, i) holds bit i
//                        of f(q) as -1 or +1); n^2 b + 2nb + 1 units, the last step nb + b;
//                        fetch by position codes. Every value is -1, 0 or 1 and every sum a
//                        small integer: exact in bf16 and fp16 at any n (compiler/README.md
//                        "binary coordinates"). Offered only with spec.binary_form, and only
//                        where the result is read by the unembedding alone.
// The planner takes, of the forms that are sound, the one whose widest compose MLP is
// smallest (ties: the order above), enumerating M only as far as that can still be the
// element form. With spec.binary_form it compares instead the dense size (parameters of the
// network with every matrix dense, what a framework pays: dense_scan_parameters).
// Both comparisons enumerate M only as far as it can still win.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/backend/plan.hpp"
#include "primitives/categorical.hpp"
#include "primitives/features.hpp"

namespace krc {

struct PrefixScanSpec {
  std::string name;                     // label prefix, e.g. "scan" or "level 1 scan"
  std::vector<std::string> set_labels;  // X
  std::vector<Transformation> symbols;  // f_s for each symbol s
  std::vector<std::string> symbol_labels;
  StateId initial = 0;  // x0
  int level = 0;        // the cascade level it computes (for roles), 0 for the whole automaton
  // The result must be a categorical (result()), as the cascade's lookups read it; otherwise
  // only unembed() reads it, which the integer form does without a one-hot.
  bool one_hot_result = false;
  bool integer_form = true;  // false: not the integer form (exact in float32 only)
  // true: the binary form is sound too, and forms are compared by dense size (--precision
  // bf16|fp16, where the integer form is not sound; fp32 keeps the comparison by units).
  bool binary_form = false;
  // The digit form's largest base: every integer below it is exact in the format (bf16 256,
  // fp16 2048).
  int max_digit_base = 256;
  std::size_t max_elements = 200000;            // monoid enumeration limit for the element form
  std::size_t max_units_per_step = 20'000'000;  // beyond this the network is not practical
};

// The monoid M for the element form: elements[0] is the identity.
struct MonoidTable {
  std::vector<Transformation> elements;
  std::vector<std::string> labels;        // shortest words, "1" for the identity
  std::vector<int> word_length;           // shortest product length of each element
  std::vector<int> symbol_element;        // the element of each symbol
  std::vector<std::vector<int>> product;  // product[a][b] = index of a.b (first a, then b)
  long long units(int step) const;        // the compose units of step `step` (0-based)
};

// The form a prefix scan takes, decided before building. Throws LimitError when even the
// smallest form exceeds spec.max_units_per_step.
struct ScanChoice {
  ScanPlan plan;
  std::optional<MonoidTable> monoid;  // with the element form
};
ScanChoice plan_prefix_scan(const PrefixScanSpec& spec, int max_len);

// What a scan network's size depends on: its slot width, and per step the width it fetches and
// its MLP's units; the vocabulary (<bos> and the symbols) and the states read out.
struct DenseScanShape {
  double width = 0;
  std::vector<std::pair<double, double>> steps;  // (fetched width, units) per step
  int max_len = 0, tokens = 0, states = 0;
  int constants = 0;  // the constant feature, where the form uses it (binary coordinates)
};
// Its parameters counting every matrix dense, as Network::size() does (d_model = 2 width + the
// position codes + constants): what a framework holding every matrix dense pays, before building.
// The binary-form planner compares forms by it.
double dense_scan_parameters(const DenseScanShape& shape);

class PrefixScan {
 public:
  PrefixScan(Features& features, PrefixScanSpec spec, const ScanChoice& choice);

  // Terms that write symbol s's transformation as the initial prefix element at a position,
  // and the identity (for BOS). The caller puts them in the token embedding or in the
  // outputs of the lookup that computes the symbol.
  Terms symbol_terms(int s) const;
  Terms identity_terms() const;

  // Adds the fetch/compose steps to the program (call after the initial terms are written).
  void build(const std::string& purpose);

  // x(t) as a categorical over X: a linear readout of the prefix element (the integer form:
  // the one-hot its last step writes; needs spec.one_hot_result).
  Categorical result() const;
  // Writes the unembedding: the logit of x is 1 for x(t) and 0 elsewhere (integer form:
  // f(q0)^2 - (f(q0) - x)^2, linear in the coordinate f(q0) + 1: its argmax is x = f(q0), by
  // a margin of 1).
  void unembed(Program& program);

 private:
  void allocate_integer_form();
  HeadOp fetch(int step, const std::string& name) const;
  void add_compose(MlpOp& mlp, int step) const;
  void add_element_products(MlpOp& mlp, int step) const;
  void add_state_map_products(MlpOp& mlp) const;
  void add_binary_compose(MlpOp& mlp, int step) const;
  void add_digit_compose(MlpOp& mlp, int step) const;
  void add_digit_terms(const Transformation& f, Terms& terms) const;
  MlpOp digit_conversion(int step) const;
  int digit(int value, int r) const {
    return (value >> (r * digit_bits_)) & ((1 << digit_bits_) - 1);
  }
  float bit(int value, int i) const { return (value >> i) & 1 ? 1.0f : -1.0f; }

  Features& features_;
  PrefixScanSpec spec_;
  ScanForm form_;
  int n_;      // |X|
  int steps_;  // ceil(log2 max_len)
  ScanPlan plan_;
  int bits_;                                   // the binary and digit forms' bits per coordinate
  int digits_per_state_ = 0, digit_bits_ = 0;  // the digit form: r digits of digit_bits_ bits
  std::optional<MonoidTable> monoid_;
  Subspace prefix_, fetched_;
  Subspace value_;   // integer form with a one-hot result: the one-hot of x(t)
  Subspace digits_;  // digit form: f(q)'s digits, n r of them
  Role role(RoleKind kind, int step = 0) const;
};

}  // namespace krc
