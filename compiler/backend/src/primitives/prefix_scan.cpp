#include "primitives/prefix_scan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/automata/integer_math.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/transformation_semigroup.hpp"
#include "krc/runtime/network_memory.hpp"
#include "primitives/attention_heads.hpp"
#include "primitives/integer_compose.hpp"

namespace krc {

namespace {

// What each form costs a step, for the choice (the element form: |M|^2 + |M|, below).
long long state_map_units(long long n) { return n * n * n + 2 * n * n; }
long long integer_units(long long n, bool one_hot) {
  return std::max(2 * n * n + 2 * n, one_hot ? 3 * n * n : 0);
}

// The widest compose MLP the integer form builds: the last step computes f(q0) alone.
long long integer_widest(long long n, int steps, bool one_hot) {
  if (steps == 0) return 0;
  const long long last = one_hot ? 3 * n * n : 2 * n + 1;
  return steps > 1 ? std::max(2 * n * n + 2 * n, last) : last;
}

// The binary form: b bits per coordinate; n^2 b product units, nb that remove the old bits,
// nb and one constant unit that clear the fetched copy; the last step composes f(q0) alone.
int binary_bits(long long n) { return std::max(1, ceil_log2(n)); }
long long binary_units(long long n) { return (n * n + 2 * n) * binary_bits(n) + 1; }
long long binary_widest(long long n, int steps) {
  if (steps == 0) return 0;
  return steps > 1 ? binary_units(n) : (n + 1) * binary_bits(n);
}

// The digit form: r digits of digit_bits bits each, as few as hold the b bits, each digit
// below max_base (PrefixScan's constructor lays them out by the same rule).
struct DigitLayout {
  int digits = 0, digit_bits = 0;
};
DigitLayout digit_layout(int bits, int max_base) {
  int most = 1;
  while ((2 << most) <= max_base) ++most;
  const int digits = (bits + most - 1) / most;
  return {digits, (bits + digits - 1) / digits};
}
// A full step's two MLPs: compose (n^2 r products, n r that remove the old digits, n b and one
// that clear the fetched bits) and conversion (at most B units per digit, n b that remove the
// old bits); the last step composes f(q0)'s bits as the binary form does.
long long digit_compose_units(long long n, int max_base) {
  const int b = binary_bits(n), r = digit_layout(b, max_base).digits;
  return n * n * r + n * r + n * b + 1;
}
long long digit_conversion_units(long long n, int max_base) {
  const int b = binary_bits(n);
  const DigitLayout d = digit_layout(b, max_base);
  return n * d.digits * (1LL << d.digit_bits) + n * b;
}
long long digit_widest(long long n, int steps, int max_base) {
  if (steps == 0) return 0;
  return steps > 1 ? std::max(digit_compose_units(n, max_base), digit_conversion_units(n, max_base))
                   : (n + 1) * binary_bits(n);
}

MonoidTable monoid_table(const TransformationSemigroup& monoid, const PrefixScanSpec& spec) {
  using ElementId = TransformationSemigroup::ElementId;
  MonoidTable t;
  const auto m = static_cast<int>(monoid.size());
  // The table holds every element as a transformation and every product: m^2 integers. The
  // enumeration stops at its own bytes, not at this square: a 10,000-state prefix-tree acceptor
  // gave 10^5 elements, whose table asked 40 GB and was killed by the kernel at 22 GB under
  // --max-memory 4G. Over the budget the element form is not taken (LimitError, which the
  // planner reads as "another form").
  const auto um = static_cast<std::uint64_t>(m);
  check_memory(
      spec.name + ": the element form's table of " + std::to_string(m) + " monoid elements over " +
          std::to_string(spec.set_labels.size()) + " states",
      saturating_add(saturating_mul(saturating_mul(um, um), sizeof(int)),
                     saturating_mul(saturating_mul(um, spec.set_labels.size()), sizeof(StateId))));
  for (int e = 0; e < m; ++e) {
    auto word = monoid.shortest_word(static_cast<ElementId>(e));
    std::string label = word.empty() ? "1" : "";
    for (std::size_t i = 0; i < word.size(); ++i)
      label += (i ? "." : "") + spec.symbol_labels[word[i]];
    t.elements.push_back(monoid.element(static_cast<ElementId>(e)));
    t.labels.push_back(std::move(label));
    t.word_length.push_back(static_cast<int>(word.size()));
  }
  for (std::size_t s = 0; s < spec.symbols.size(); ++s)
    t.symbol_element.push_back(static_cast<int>(monoid.letter_element(static_cast<LetterId>(s))));
  t.product.reserve(m);
  for (int a = 0; a < m; ++a) {
    const auto row = monoid.multiply_row(static_cast<ElementId>(a));
    t.product.emplace_back(row.begin(), row.end());
  }
  return t;
}

}  // namespace

// Before step l both operands are products of at most 2^l symbols, so longer ones need no
// units; a pair whose product is the current element needs none either. Plus one unit per
// element to clear the fetched copy.
long long MonoidTable::units(int step) const {
  const int m = static_cast<int>(elements.size());
  const int longest = 1 << std::min(step, 30);
  long long count = m;
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b)
      count += word_length[a] <= longest && word_length[b] <= longest && product[a][b] != b;
  return count;
}

namespace {
void check_units(const PrefixScanSpec& spec, const ScanPlan& plan) {
  if (plan.units > static_cast<long long>(spec.max_units_per_step))
    throw LimitError(spec.name + ": a parallel-prefix step over " + std::to_string(plan.set_size) +
                     " states would need " + std::to_string(plan.units) + " hidden units (limit " +
                     std::to_string(spec.max_units_per_step) + ")");
}

// The MLP layers a plan builds, as far as the memory checks below need them: the binary and
// state-map forms' full steps all have plan.units units (the last step is smaller and left
// out); the element and integer forms' only the widest is known (one step); the digit form
// has two MLPs a full step, compose (b + 2 inputs a product unit) and conversion (one input, up
// to a digit's bits out). One output per unit otherwise; no heads, no residual.
NetworkShape planned_mlps(const PrefixScanSpec& spec, const ScanPlan& plan) {
  const long long n = plan.set_size;
  const auto b = static_cast<std::uint64_t>(binary_bits(n));
  const auto layer_of = [](long long units, std::uint64_t in, std::uint64_t out) {
    LayerSize layer;
    layer.mlp_hidden = units;
    layer.mlp_in_nonzeros = static_cast<std::uint64_t>(units) * in;
    layer.mlp_out_nonzeros = static_cast<std::uint64_t>(units) * out;
    return layer;
  };
  NetworkShape shape;
  const int full = std::max(0, plan.steps - 1);
  if (plan.form == ScanForm::DigitCoordinates) {
    const auto digit_bits =
        static_cast<std::uint64_t>(digit_layout(int(b), spec.max_digit_base).digit_bits);
    for (int step = 0; step < full; ++step) {
      shape.layers.push_back(layer_of(digit_compose_units(n, spec.max_digit_base), b + 2, 1));
      shape.layers.push_back(
          layer_of(digit_conversion_units(n, spec.max_digit_base), 1, digit_bits));
    }
    return shape;
  }
  const bool coded = plan.form == ScanForm::BinaryCoordinates;
  const bool uniform = coded || plan.form == ScanForm::StateMapOneHot;
  for (int step = 0; step < (uniform ? full : std::min(plan.steps, 1)); ++step)
    shape.layers.push_back(layer_of(plan.units, coded ? b + 1 : 2, 1));
  return shape;
}

// What a plan holds in memory: the program's MLP entries (12 bytes each: unit, dimension,
// weight; a unit's inputs and outputs), which the build holds before assembly checks the
// network, and the network read back as krc reads every file it writes (weights_file.cpp,
// check_readable: the network and the forward pass's prepared copies, network_memory.cpp's
// model, several times the program's 12 bytes an MLP weight).
struct ScanMemory {
  std::uint64_t program = 0, read_back = 0;
  std::uint64_t most() const { return std::max(program, read_back); }
};

ScanMemory scan_memory(const PrefixScanSpec& spec, const ScanPlan& plan) {
  const NetworkShape shape = planned_mlps(spec, plan);
  // Every step at the widest (the digit form: its layers, and the last step at the widest).
  const bool coded =
      plan.form == ScanForm::BinaryCoordinates || plan.form == ScanForm::DigitCoordinates;
  const std::uint64_t per_unit =
      coded ? static_cast<std::uint64_t>(binary_bits(plan.set_size)) + 2 : 3;
  std::uint64_t entries =
      static_cast<std::uint64_t>(plan.units) * static_cast<std::uint64_t>(plan.steps) * per_unit;
  if (plan.form == ScanForm::DigitCoordinates) {
    entries = static_cast<std::uint64_t>(plan.units) * per_unit;
    for (const LayerSize& layer : shape.layers)
      entries = saturating_add(entries, layer.mlp_in_nonzeros + layer.mlp_out_nonzeros);
  }
  return {saturating_mul(entries, sizeof(Entry)),
          saturating_add(network_bytes(shape), prepared_bytes(shape))};
}

// The memory budget against both, before building: without the first a 1,000-state model in
// bf16 (10 M units a step) was killed by the kernel while its operations were written; without
// the second it built for 5 minutes under --max-memory 15G (the program alone, 13.4 GiB, fit)
// before writing refused it. The plan itself stays a pure decision.
void check_scan_memory(const PrefixScanSpec& spec, const ScanPlan& plan) {
  const ScanMemory memory = scan_memory(spec, plan);
  const std::string what = spec.name + ": the parallel prefix over " +
                           std::to_string(plan.set_size) + " states (" + to_string(plan.form) +
                           ", " + std::to_string(plan.units) + " hidden units a step, " +
                           std::to_string(plan.steps) + " steps)";
  check_memory(what, memory.program);
  check_memory(what + ", read back as krc reads every file it writes (the network and the " +
                   "forward pass's copies),",
               memory.read_back);
}
}  // namespace

double dense_scan_parameters(const DenseScanShape& shape) {
  // Residual: the prefix and its fetched copy, the position codes (keys, and t - k per step)
  // and the constants; then the embeddings and the unembedding.
  const double steps = double(shape.steps.size()),
               code = ceil_log2(std::int64_t{shape.max_len} + 1);
  const double d = 2 * shape.width + code * (steps + 1) + shape.constants;
  double total = d * (shape.tokens + shape.max_len + 1 + shape.states);
  // A step: its fetch head (query and key a position code wide, value and output the fetched
  // width) and its MLP.
  for (auto [fetched, units] : shape.steps)
    total += d * (2 * code + 2 * fetched) + 2 * d * units + units + d;
  return total;
}

namespace {

// The most elements whose table (monoid_table: m^2 products and m transformations of n states,
// 4 bytes each) fits in the memory budget: 4m^2 + 4mn <= budget. Enumerating past it is wasted,
// since the table would be refused after (issue 31: a 10,000-state prefix-tree acceptor's
// monoid was enumerated to some 10^5 elements of 10^4 states before the table was refused).
std::size_t affordable_elements(const PrefixScanSpec& spec) {
  const double n = double(spec.set_labels.size()), budget = double(memory_budget());
  return static_cast<std::size_t>(std::max(0.0, (std::sqrt(n * n + budget) - n) / 2.0));
}

// The monoid the symbols generate, given up past `limit` elements (LimitError), and past the
// elements whose table the budget could hold.
TransformationSemigroup generate_monoid(const PrefixScanSpec& spec, std::size_t limit) {
  limit = std::min(limit, affordable_elements(spec));
  std::vector<std::string> names;
  for (std::size_t q = 0; q < spec.set_labels.size(); ++q) names.push_back(std::to_string(q));
  std::vector<std::string> letters;
  for (std::size_t s = 0; s < spec.symbols.size(); ++s) letters.push_back(std::to_string(s));
  Automaton action("symbols", names, letters,
                   std::vector<std::vector<StateId>>(spec.symbols.begin(), spec.symbols.end()), 0);
  return TransformationSemigroup::generate(action, /*with_identity=*/true, limit);
}

// Each form's dense shape (the element form from its table, or at |M| = m with every pair).
DenseScanShape shape_of(const PrefixScanSpec& spec, int max_len) {
  return {0,
          {},
          max_len,
          static_cast<int>(spec.symbols.size()) + 1,
          static_cast<int>(spec.set_labels.size())};
}
DenseScanShape state_map_shape(const PrefixScanSpec& spec, int max_len, int steps) {
  DenseScanShape shape = shape_of(spec, max_len);
  const double n = double(spec.set_labels.size());
  shape.width = n * n;
  shape.steps.assign(steps, {n * n, n * n * n + 2 * n * n});
  return shape;
}
DenseScanShape binary_shape(const PrefixScanSpec& spec, int max_len, int steps) {
  DenseScanShape shape = shape_of(spec, max_len);
  const long long n = static_cast<long long>(spec.set_labels.size()), b = binary_bits(n);
  shape.width = double(n * b);
  shape.constants = 1;
  shape.steps.assign(steps, {double(n * b), double(binary_units(n))});
  if (steps) shape.steps.back() = {double(b), double((n + 1) * b)};
  return shape;
}
DenseScanShape element_shape(const PrefixScanSpec& spec, int max_len, int steps, double m,
                             const MonoidTable* table, bool lower = false) {
  DenseScanShape shape = shape_of(spec, max_len);
  shape.width = m;
  for (int step = 0; step < steps; ++step)
    shape.steps.push_back({m, table ? double(table->units(step)) : lower ? m : m * m + m});
  return shape;
}

// Whether a plan is within the unit limit and the memory budget.
bool fits(const PrefixScanSpec& spec, const ScanPlan& plan) {
  try {
    check_units(spec, plan);
    check_scan_memory(spec, plan);
    return true;
  } catch (const LimitError&) {
    return false;
  }
}

// Where the binary form is sound (bf16 and fp16): the form of least dense size among the
// element form (M enumerated only as far as it can still be the least), the state maps and
// the binary codes; ties in that order.
void plan_narrow_scan(const PrefixScanSpec& spec, int max_len, ScanChoice& choice) {
  ScanPlan& plan = choice.plan;
  const long long n = plan.set_size;
  const int steps = plan.steps;
  const double state_map = dense_scan_parameters(state_map_shape(spec, max_len, steps));
  const double binary = dense_scan_parameters(binary_shape(spec, max_len, steps));
  const double other = std::min(state_map, binary);
  // |M| = m costs at least m units a step (the clearing ones) and at most m^2 + m: enumerate M
  // as far as the upper bound can still win, or (capped at kSmallMonoid, whose product table is
  // cheap) as far as the lower bound can, then compare the exact size.
  constexpr std::size_t kSmallMonoid = 1024;
  const auto largest = [&](bool lower, std::size_t cap) {
    std::size_t m = 1;
    while (m < cap && dense_scan_parameters(element_shape(spec, max_len, steps, double(m + 1),
                                                          nullptr, lower)) <= other)
      ++m;
    return m;
  };
  const std::size_t limit = std::max(largest(false, spec.max_elements),
                                     largest(true, std::min(kSmallMonoid, spec.max_elements)));
  try {
    const auto monoid = generate_monoid(spec, limit);
    MonoidTable table = monoid_table(monoid, spec);
    const double element =
        dense_scan_parameters(element_shape(spec, max_len, steps, double(monoid.size()), &table));
    if (element <= other) {
      plan.form = ScanForm::ElementOneHot;
      plan.monoid_size = monoid.size();
      plan.units = steps ? table.units(steps - 1) : 0;
      choice.monoid = std::move(table);
      return;
    }
  } catch (const LimitError&) {
  }
  const bool by_bits = binary < state_map;
  plan.form = by_bits ? ScanForm::BinaryCoordinates : ScanForm::StateMapOneHot;
  plan.units = by_bits ? binary_widest(n, steps) : (steps ? state_map_units(n) : 0);
  // Digit coordinates where that form is over the unit limit or the memory budget: n^2 r
  // product units a step against binary coordinates' n^2 b (a 657-state model in bf16: 0.9 M
  // against 4.3 M), at two layers a step and digits up to 255 in the residual. Only then, for
  // now: its code is not of constant norm (the GPT-2 export's LayerNorm proof and certify's
  // selector rule know the binary form), so it does not yet replace the binary form by size.
  // Where neither fits, the one that needs less memory within the unit limit is kept, so that
  // the refusal names the least budget that would do (the 1,000-state AALpy model in bf16:
  // 96 GiB read back in binary coordinates, 27 GiB in digits).
  if (!fits(spec, plan)) {
    ScanPlan digits = plan;
    digits.form = ScanForm::DigitCoordinates;
    digits.units = digit_widest(n, steps, spec.max_digit_base);
    const auto within_units = [&](const ScanPlan& p) {
      return p.units <= static_cast<long long>(spec.max_units_per_step);
    };
    if (fits(spec, digits) ||
        (within_units(digits) && (!within_units(plan) || scan_memory(spec, digits).most() <
                                                             scan_memory(spec, plan).most())))
      plan = digits;
  }
}

}  // namespace

// Enumerates the monoid generated by the symbols (breadth first, so word lengths are
// shortest), giving up as soon as the element form would need more units than the smallest
// other sound form: |M|^2 + |M| <= that.
ScanChoice plan_prefix_scan(const PrefixScanSpec& spec, int max_len) {
  const int n = static_cast<int>(spec.set_labels.size());
  ScanChoice choice;
  ScanPlan& plan = choice.plan;
  plan.set_size = n;
  plan.steps = ceil_log2(max_len);
  if (spec.binary_form && !spec.one_hot_result) {
    plan_narrow_scan(spec, max_len, choice);
    check_units(spec, plan);
    return choice;
  }
  // The integer form needs a step to write a one-hot, and float32 to hold its sums.
  const bool integer_sound = spec.integer_form && integer_coordinates_exact(n) &&
                             !(spec.one_hot_result && plan.steps == 0);
  const long long other = integer_sound
                              ? std::min(state_map_units(n), integer_units(n, spec.one_hot_result))
                              : state_map_units(n);
  const auto limit = static_cast<std::size_t>(std::min<double>(
      double(spec.max_elements), (std::sqrt(4.0 * double(other) + 1.0) - 1.0) / 2.0));
  try {
    const auto monoid = generate_monoid(spec, limit);
    choice.monoid = monoid_table(monoid, spec);
    plan.form = ScanForm::ElementOneHot;
    plan.monoid_size = monoid.size();
    plan.units = plan.steps ? choice.monoid->units(plan.steps - 1) : 0;
  } catch (const LimitError&) {
    const bool integer =
        integer_sound && integer_units(n, spec.one_hot_result) < state_map_units(n);
    plan.form = integer ? ScanForm::IntegerCoordinates : ScanForm::StateMapOneHot;
    plan.units = integer ? integer_widest(n, plan.steps, spec.one_hot_result)
                         : (plan.steps ? state_map_units(n) : 0);
  }
  check_units(spec, plan);
  return choice;
}

PrefixScan::PrefixScan(Features& features, PrefixScanSpec spec, const ScanChoice& choice)
    : features_(features),
      spec_(std::move(spec)),
      form_(choice.plan.form),
      n_(static_cast<int>(spec_.set_labels.size())),
      steps_(choice.plan.steps),
      plan_(choice.plan),
      bits_(binary_bits(n_)),
      monoid_(choice.monoid) {
  auto& layout = features_.program().layout();
  std::vector<std::string> labels;
  switch (form_) {
    case ScanForm::ElementOneHot:
      labels = monoid_->labels;
      break;
    case ScanForm::StateMapOneHot:
      for (int q = 0; q < n_; ++q)
        for (int r = 0; r < n_; ++r)
          labels.push_back(spec_.set_labels[q] + "->" + spec_.set_labels[r]);
      break;
    case ScanForm::IntegerCoordinates:
      for (int q = 0; q < n_; ++q) labels.push_back("f(" + spec_.set_labels[q] + ")+1");
      break;
    case ScanForm::BinaryCoordinates:
    case ScanForm::DigitCoordinates:
      for (int q = 0; q < n_; ++q)
        for (int i = 0; i < bits_; ++i)
          labels.push_back("f(" + spec_.set_labels[q] + "):bit" + std::to_string(i));
      break;
  }
  prefix_ = layout.allocate(spec_.name + " prefix", labels, role(RoleKind::ScanPrefix));
  fetched_ = layout.allocate(spec_.name + " fetched", labels, role(RoleKind::ScanFetch));
  if (form_ == ScanForm::DigitCoordinates) {
    // r digits of at most log2(max_digit_base) bits each, as few as hold the b bits.
    const DigitLayout d = digit_layout(bits_, spec_.max_digit_base);
    digits_per_state_ = d.digits;
    digit_bits_ = d.digit_bits;
    std::vector<std::string> digit_labels;
    for (int q = 0; q < n_; ++q)
      for (int r = 0; r < digits_per_state_; ++r)
        digit_labels.push_back("f(" + spec_.set_labels[q] + "):digit" + std::to_string(r));
    digits_ = layout.allocate(spec_.name + " digits", digit_labels, role(RoleKind::ScanPrefix));
  }
  if (form_ == ScanForm::IntegerCoordinates && spec_.one_hot_result)
    value_ = layout.allocate(spec_.name + " value", spec_.set_labels, role(RoleKind::Coordinate));
}

Role PrefixScan::role(RoleKind kind, int step) const {
  Role r{kind};
  r.level = spec_.level;
  r.step = step;
  return r;
}

Terms PrefixScan::symbol_terms(int s) const {
  const Transformation& f = spec_.symbols.at(s);
  Terms terms;
  switch (form_) {
    case ScanForm::ElementOneHot:
      return write_value(prefix_, monoid_->symbol_element.at(s));
    case ScanForm::StateMapOneHot:
      for (int q = 0; q < n_; ++q) terms.emplace_back(prefix_[q * n_ + f[q]], 1.0f);
      break;
    case ScanForm::IntegerCoordinates:
      for (int q = 0; q < n_; ++q) terms.emplace_back(prefix_[q], static_cast<float>(f[q] + 1));
      break;
    case ScanForm::BinaryCoordinates:
    case ScanForm::DigitCoordinates:
      for (int q = 0; q < n_; ++q)
        for (int i = 0; i < bits_; ++i) terms.emplace_back(prefix_[q * bits_ + i], bit(f[q], i));
      break;
  }
  add_digit_terms(f, terms);
  return terms;
}

Terms PrefixScan::identity_terms() const {
  Terms terms;
  switch (form_) {
    case ScanForm::ElementOneHot:
      return write_value(prefix_, 0);
    case ScanForm::StateMapOneHot:
      for (int q = 0; q < n_; ++q) terms.emplace_back(prefix_[q * n_ + q], 1.0f);
      break;
    case ScanForm::IntegerCoordinates:
      for (int q = 0; q < n_; ++q) terms.emplace_back(prefix_[q], static_cast<float>(q + 1));
      break;
    case ScanForm::BinaryCoordinates:
    case ScanForm::DigitCoordinates:
      for (int q = 0; q < n_; ++q)
        for (int i = 0; i < bits_; ++i) terms.emplace_back(prefix_[q * bits_ + i], bit(q, i));
      break;
  }
  Transformation identity(n_);
  for (int q = 0; q < n_; ++q) identity[q] = static_cast<StateId>(q);
  add_digit_terms(identity, terms);
  return terms;
}

// The digit form writes f(q)'s digits beside its bits (nothing in the other forms).
void PrefixScan::add_digit_terms(const Transformation& f, Terms& terms) const {
  if (form_ != ScanForm::DigitCoordinates) return;
  for (int q = 0; q < n_; ++q)
    for (int r = 0; r < digits_per_state_; ++r)
      if (const int d = digit(static_cast<int>(f[q]), r); d != 0)
        terms.emplace_back(digits_[q * digits_per_state_ + r], static_cast<float>(d));
}

// The integer and binary forms' last step needs the image of q0 alone, so it fetches that one.
HeadOp PrefixScan::fetch(int step, const std::string& name) const {
  const int k = 1 << step;
  const Role r = role(RoleKind::ScanFetch, step + 1);
  std::vector<Entry> copy;
  if (form_ == ScanForm::BinaryCoordinates || form_ == ScanForm::DigitCoordinates) {
    const int q0 = static_cast<int>(spec_.initial);
    for (int q = 0; q < n_; ++q)
      for (int i = 0; i < bits_ && (step + 1 < steps_ || q == q0); ++i)
        copy.push_back({prefix_[q * bits_ + i], fetched_[q * bits_ + i], 1.0f});
    return fetch_from_offset(features_, k, copy, name, r);
  }
  if (form_ != ScanForm::IntegerCoordinates) {
    for (int i = 0; i < prefix_.width; ++i) copy.push_back({prefix_[i], fetched_[i], 1.0f});
    return fetch_from_offset(features_, k, copy, name, r);
  }
  const int q0 = static_cast<int>(spec_.initial);
  for (int q = 0; q < n_; ++q)
    if (step + 1 < steps_ || q == q0) copy.push_back({prefix_[q], fetched_[q], 1.0f});
  return fetch_back_by_phase(features_, k, copy, name, r);
}

void PrefixScan::build(const std::string& purpose) {
  check_scan_memory(spec_, plan_);
  Program& program = features_.program();
  for (int step = 0; step < steps_; ++step) {
    const int k = 1 << step;
    const std::string tag = spec_.name + " step " + std::to_string(step + 1);
    const std::string purpose_of_step = purpose + " " + std::to_string(step + 1);
    program.add(fetch(step, tag + ": fetch prefix from t-" + std::to_string(k)), purpose_of_step);
    MlpOp mlp;
    mlp.name = tag + ": compose";
    mlp.begin_block(tag + ": compose prefix(t-" + std::to_string(k) + ") . prefix(t)",
                    role(RoleKind::ScanCompose, step + 1));
    add_compose(mlp, step);
    program.add(std::move(mlp), purpose_of_step);
    if (form_ == ScanForm::DigitCoordinates && step + 1 < steps_)
      program.add(digit_conversion(step), purpose_of_step);
  }
}

void PrefixScan::add_compose(MlpOp& mlp, int step) const {
  const Role compose = role(RoleKind::ScanCompose, step + 1);
  const std::string tag = spec_.name + " step " + std::to_string(step + 1);
  const int q0 = static_cast<int>(spec_.initial);
  switch (form_) {
    case ScanForm::ElementOneHot:
      add_element_products(mlp, step);
      mlp.begin_block(tag + ": clear fetched prefix", compose);
      break;
    case ScanForm::StateMapOneHot:
      add_state_map_products(mlp);
      // The products write the new maps whole, so the old ones go.
      mlp.begin_block(tag + ": clear old prefix and fetched copy", compose);
      add_clear_units(mlp, prefix_);
      break;
    case ScanForm::IntegerCoordinates: {
      if (step + 1 == steps_) {  // the last: nothing fetches from here any more
        if (spec_.one_hot_result)
          add_integer_one_hot_units(mlp, fetched_[q0], prefix_, value_);
        else
          add_integer_compose_units(mlp, fetched_, prefix_, {q0});
        return;
      }
      std::vector<int> all(n_);
      for (int q = 0; q < n_; ++q) all[q] = q;
      add_integer_compose_units(mlp, fetched_, prefix_, all);
      mlp.begin_block(tag + ": clear fetched copy", compose);
      break;
    }
    case ScanForm::BinaryCoordinates:
      add_binary_compose(mlp, step);
      return;
    case ScanForm::DigitCoordinates:
      add_digit_compose(mlp, step);
      return;
  }
  add_clear_units(mlp, fetched_);
}

// (first fetched x, then current y)(q) = y(x(q)), bit i of each coordinate as -1 or +1. Unit
// (q, j, i) fires when x(q)'s bits spell j and bit i of y(j) is +1 (a lookup over b + 1 +-1
// inputs: pre-activation sum_c s_c v_c - m + 1 with m = b + 1 conditions, so 1 when all hold
// and at most -1 when one fails) and writes +2: at most one j matches, so the new bit is
// 2 [bit set] - 1. Unit (q, i) ReLU(y_qi) writes -2, which takes the old bit away
// (y + 1 = 2 ReLU(y) for y = +-1); together they write new - old in place. The fetched copy is
// cleared the same way: -x = -2 ReLU(x) + 1, the 1 from one unit on the constant feature. The
// last step composes f(q0) alone (nothing fetches from here any more, so nothing is cleared).
void PrefixScan::add_binary_compose(MlpOp& mlp, int step) const {
  const Role compose = role(RoleKind::ScanCompose, step + 1);
  const std::string tag = spec_.name + " step " + std::to_string(step + 1);
  const bool last = step + 1 == steps_;
  const int q0 = static_cast<int>(spec_.initial), b = bits_;
  const auto lookup = [&](int q, int j, int i) {
    Terms in;
    for (int c = 0; c < b; ++c) in.emplace_back(fetched_[q * b + c], bit(j, c));
    in.emplace_back(prefix_[j * b + i], 1.0f);
    mlp.add_unit(in, -static_cast<float>(b), {{prefix_[q * b + i], 2.0f}});
  };
  for (int q = 0; q < n_; ++q) {
    if (last && q != q0) continue;
    for (int j = 0; j < n_; ++j)
      for (int i = 0; i < b; ++i) lookup(q, j, i);
  }
  mlp.begin_block(tag + ": remove old prefix", compose);
  for (int q = 0; q < n_; ++q)
    for (int i = 0; i < b && (!last || q == q0); ++i)
      mlp.add_unit({{prefix_[q * b + i], 1.0f}}, 0.0f, {{prefix_[q * b + i], -2.0f}});
  if (last) return;
  mlp.begin_block(tag + ": clear fetched copy", compose);
  Terms ones;
  for (int d = 0; d < fetched_.width; ++d) {
    mlp.add_unit({{fetched_[d], 1.0f}}, 0.0f, {{fetched_[d], -2.0f}});
    ones.emplace_back(fetched_[d], 1.0f);
  }
  mlp.add_unit({{features_.one()[0], 1.0f}}, 0.0f, ones);
}

// (first fetched x, then current y)(q) = y(x(q)) in the digit form: unit (q, j, r) reads x(q)'s
// fetched bits against j's code and digit r of y(j),
//   ReLU(M (sum_c s_c x_c - b) + d_r(y(j))),
// which is d_r(y(j)) when x(q) = j and at most B - 1 - 2M < 0 otherwise (M = B: one failed
// bit costs 2M). The -M b comes from the constant feature, inside the product, so that the
// large terms cancel before any rounding; every partial sum is an integer below 2^24, exact in a
// float32 accumulation in any order, and the active value is a digit, exact in the format. The
// unit writes the new digit; unit ReLU(d) removes the old one (digits are >= 0), and the fetched
// bits are cleared as in the binary form. The last step composes f(q0)'s bits directly, as the
// binary form does (the unembedding reads them), from the current bits kept by the conversion.
void PrefixScan::add_digit_compose(MlpOp& mlp, int step) const {
  if (step + 1 == steps_) {
    add_binary_compose(mlp, step);
    return;
  }
  const Role compose = role(RoleKind::ScanCompose, step + 1);
  const std::string tag = spec_.name + " step " + std::to_string(step + 1);
  const int b = bits_, r_count = digits_per_state_, one = features_.one()[0];
  const float m = static_cast<float>(1 << digit_bits_);
  for (int q = 0; q < n_; ++q)
    for (int j = 0; j < n_; ++j)
      for (int r = 0; r < r_count; ++r) {
        Terms in;
        for (int c = 0; c < b; ++c) in.emplace_back(fetched_[q * b + c], m * bit(j, c));
        in.emplace_back(digits_[j * r_count + r], 1.0f);
        in.emplace_back(one, -m * static_cast<float>(b));
        mlp.add_unit(in, 0.0f, {{digits_[q * r_count + r], 1.0f}});
      }
  mlp.begin_block(tag + ": remove old digits", compose);
  for (int d = 0; d < digits_.width; ++d)
    mlp.add_unit({{digits_[d], 1.0f}}, 0.0f, {{digits_[d], -1.0f}});
  mlp.begin_block(tag + ": clear fetched copy", compose);
  Terms ones;
  for (int d = 0; d < fetched_.width; ++d) {
    mlp.add_unit({{fetched_[d], 1.0f}}, 0.0f, {{fetched_[d], -2.0f}});
    ones.emplace_back(fetched_[d], 1.0f);
  }
  mlp.add_unit({{one, 1.0f}}, 0.0f, ones);
}

// The new digits back into bits, in place: bit c of digit d as +-1 is g(d) = -1 +
// sum_{v >= 1} (g(v) - g(v - 1)) [d >= v], and for an integer d >= 0, [d >= v] = h_{v-1} - h_v
// with h_u = ReLU(d - u); so unit h_u writes g(u + 1) - 2 g(u) + g(u - 1) (0, +-2 or +-4) to the
// bit, and only where that is not 0. The old bit o goes as in the binary form (-2 ReLU(o) + 1),
// whose +1 cancels g's -1: no constant unit. Hidden values are integers below B, outputs small
// integers, every partial sum below 2^24.
MlpOp PrefixScan::digit_conversion(int step) const {
  const Role compose = role(RoleKind::ScanCompose, step + 1);
  const std::string tag = spec_.name + " step " + std::to_string(step + 1);
  const int base = 1 << digit_bits_, b = bits_;
  // g_i(v): bit i of the digit value v as +-1 (v outside [0, base) never occurs).
  const auto g = [&](int i, int v) { return v < 0 ? -1.0f : bit(v, i); };
  MlpOp mlp;
  mlp.name = tag + ": digits to bits";
  mlp.begin_block(tag + ": digits to bits", compose);
  for (int q = 0; q < n_; ++q)
    for (int r = 0; r < digits_per_state_; ++r) {
      const int first = r * digit_bits_, last = std::min(b, first + digit_bits_);
      for (int u = 0; u < base; ++u) {
        Terms out;
        for (int c = first; c < last; ++c) {
          const int i = c - first;
          const float w = (u + 1 < base ? g(i, u + 1) : g(i, u)) - 2 * g(i, u) + g(i, u - 1);
          if (w != 0.0f) out.emplace_back(prefix_[q * b + c], w);
        }
        if (!out.empty())
          mlp.add_unit({{digits_[q * digits_per_state_ + r], 1.0f}}, -static_cast<float>(u), out);
      }
    }
  mlp.begin_block(tag + ": remove old bits", compose);
  for (int d = 0; d < prefix_.width; ++d)
    mlp.add_unit({{prefix_[d], 1.0f}}, 0.0f, {{prefix_[d], -2.0f}});
  return mlp;
}

// One unit per pair (a, b) of elements: fetched a and current b become a.b in place.
void PrefixScan::add_element_products(MlpOp& mlp, int step) const {
  const MonoidTable& t = *monoid_;
  const int m = static_cast<int>(t.elements.size());
  const Categorical prefix = Categorical::one_hot(prefix_, t.labels);
  const Categorical fetched = Categorical::one_hot(fetched_, t.labels);
  const int longest = 1 << step;
  for (int a = 0; a < m; ++a) {
    if (t.word_length[a] > longest) continue;
    for (int b = 0; b < m; ++b) {
      if (t.word_length[b] > longest || t.product[a][b] == b) continue;
      add_lookup_unit(mlp, {&fetched, &prefix}, {a, b},
                      {{prefix_[t.product[a][b]], 1.0f}, {prefix_[b], -1.0f}});
    }
  }
}

// (first fetched, then current)(q) = current(fetched(q)): unit (q, i, j) fires when the
// fetched map sends q to i and the current one sends i to j, and writes q -> j.
void PrefixScan::add_state_map_products(MlpOp& mlp) const {
  std::vector<Categorical> prefix_block(n_), fetched_block(n_);  // block q: the image of q
  for (int q = 0; q < n_; ++q)
    for (int r = 0; r < n_; ++r) {
      prefix_block[q].indicator.push_back({{prefix_[q * n_ + r], 1.0f}});
      fetched_block[q].indicator.push_back({{fetched_[q * n_ + r], 1.0f}});
    }
  for (int q = 0; q < n_; ++q)
    for (int i = 0; i < n_; ++i)
      for (int j = 0; j < n_; ++j)
        add_lookup_unit(mlp, {&fetched_block[q], &prefix_block[i]}, {i, j},
                        {{prefix_[q * n_ + j], 1.0f}});
}

Categorical PrefixScan::result() const {
  const int q0 = static_cast<int>(spec_.initial);
  Categorical x;
  x.labels = spec_.set_labels;
  x.indicator.resize(n_);
  switch (form_) {
    case ScanForm::ElementOneHot:
      for (std::size_t e = 0; e < monoid_->elements.size(); ++e)
        x.indicator[monoid_->elements[e][q0]].emplace_back(prefix_[static_cast<int>(e)], 1.0f);
      break;
    case ScanForm::StateMapOneHot:
      for (int r = 0; r < n_; ++r) x.indicator[r].emplace_back(prefix_[q0 * n_ + r], 1.0f);
      break;
    case ScanForm::IntegerCoordinates:
      if (!spec_.one_hot_result || steps_ == 0)
        throw std::logic_error(spec_.name + ": an integer-coordinate scan without a one-hot");
      return Categorical::one_hot(value_, spec_.set_labels);
    case ScanForm::BinaryCoordinates:
    case ScanForm::DigitCoordinates:
      throw std::logic_error(spec_.name + ": a binary- or digit-coordinate scan has no one-hot");
  }
  return x;
}

void PrefixScan::unembed(Program& program) {
  if (form_ == ScanForm::BinaryCoordinates || form_ == ScanForm::DigitCoordinates) {
    // The logit of v is its code against f(q0)'s bits: b for v = f(q0), at most b - 2 elsewhere.
    const int first = static_cast<int>(spec_.initial) * bits_;
    for (int v = 0; v < n_; ++v)
      for (int i = 0; i < bits_; ++i) program.unembed(prefix_[first + i], v, bit(v, i));
    return;
  }
  if (form_ != ScanForm::IntegerCoordinates || spec_.one_hot_result) {
    const Categorical state = result();
    for (int q = 0; q < state.size(); ++q)
      for (auto [dim, w] : state.indicator[q]) program.unembed(dim, q, w);
    return;
  }
  // With c = f(q0) + 1: 2 v c - v (v + 2) = (c - 1)^2 - (c - 1 - v)^2.
  const int image = prefix_[static_cast<int>(spec_.initial)], one = features_.one()[0];
  for (int v = 1; v < n_; ++v) {
    program.unembed(image, v, static_cast<float>(2 * v));
    program.unembed(one, v, -static_cast<float>(v * (v + 2)));
  }
}

}  // namespace krc
