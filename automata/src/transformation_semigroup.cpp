#include "krc/automata/transformation_semigroup.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/automata/interrupt.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/thousands.hpp"

namespace krc {

namespace {

using ElementId = TransformationSemigroup::ElementId;
constexpr ElementId kNoParent = std::numeric_limits<ElementId>::max();
constexpr LetterId kNoLetter = std::numeric_limits<LetterId>::max();

// The hash depends on the values only, not on the integer type that stores them, so that
// index_of (given StateIds) and the enumerator (working in the narrow type) agree.
template <class T>
std::uint32_t hash_transformation(const T* entries, std::size_t n) {
  std::uint64_t h = 0x243F6A8885A308D3ull ^ n;
  for (std::size_t q = 0; q < n; ++q) {
    h ^= static_cast<std::uint64_t>(entries[q]);
    h *= 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  h ^= h >> 32;
  return static_cast<std::uint32_t>(h);
}

}  // namespace

// Runs the breadth-first search with elements stored as `Entry` (uint8/16/32_t).
template <class Entry>
class SemigroupEnumerator {
 public:
  SemigroupEnumerator(TransformationSemigroup& s, const Automaton& automaton,
                      std::size_t max_elements, std::size_t max_bytes);
  // 1. the generators (or the identity); 2. products breadth first; 3. the identity's place.
  void run();

 private:
  void add_generators(std::vector<Entry>& scratch);
  void close_under_letters(std::vector<Entry>& product);
  void find_identity();
  ElementId find_or_insert(const Entry* t, ElementId parent, LetterId letter);
  void check_growth() const;
  void insert_slot(std::uint32_t hash, ElementId id);
  void grow();
  [[noreturn]] void throw_limit() const;

  TransformationSemigroup& s_;
  const Automaton& automaton_;
  std::size_t n_, k_, max_elements_, bytes_per_element_ = 0;
  bool bytes_limited_ = false, budget_limited_ = false;
  std::vector<Entry>& elements_;
  std::vector<Entry> letter_table_;  // letter_table_[a * n + q] = delta(q, a)
};

template <class Entry>
SemigroupEnumerator<Entry>::SemigroupEnumerator(TransformationSemigroup& s,
                                                const Automaton& automaton,
                                                std::size_t max_elements, std::size_t max_bytes)
    : s_(s),
      automaton_(automaton),
      n_(automaton.state_count()),
      k_(automaton.letter_count()),
      max_elements_(max_elements),
      elements_(std::get<std::vector<Entry>>(s.elements_)) {
  // Bytes one more element costs: its entries, its Cayley row, its tree links, and two hash
  // slots (the table stays at most half full).
  bytes_per_element_ = n_ * sizeof(Entry) + k_ * sizeof(ElementId) + sizeof(ElementId) +
                       sizeof(LetterId) + 2 * sizeof(TransformationSemigroup::Slot);
  // The arrays grow by doubling, so a reallocation holds the old and the new one: the memory
  // budget allows a third of itself in elements.
  const std::uint64_t budget = memory_budget() / 3;
  budget_limited_ = budget < max_bytes;
  max_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(max_bytes, budget));
  max_elements_ = std::min(max_elements_, std::max<std::size_t>(1, max_bytes / bytes_per_element_));
  bytes_limited_ = max_elements_ < max_elements;
  letter_table_.resize(k_ * n_);
  for (LetterId a = 0; a < k_; ++a)
    for (StateId q = 0; q < n_; ++q)
      letter_table_[a * n_ + q] = static_cast<Entry>(automaton.step(q, a));
  s_.table_.assign(1024, {});
}

template <class Entry>
void SemigroupEnumerator<Entry>::run() {
  std::vector<Entry> product(n_);
  add_generators(product);
  close_under_letters(product);
  find_identity();
  elements_.shrink_to_fit();
}

template <class Entry>
void SemigroupEnumerator<Entry>::add_generators(std::vector<Entry>& scratch) {
  if (s_.with_identity_) {
    for (StateId q = 0; q < n_; ++q) scratch[q] = static_cast<Entry>(q);
    find_or_insert(scratch.data(), kNoParent, kNoLetter);
  } else {
    for (LetterId a = 0; a < k_; ++a)
      s_.letter_element_.push_back(find_or_insert(&letter_table_[a * n_], kNoParent, a));
  }
}

template <class Entry>
void SemigroupEnumerator<Entry>::close_under_letters(std::vector<Entry>& product) {
  std::vector<Entry> current(n_);
  s_.cayley_.reserve(s_.size() * k_);
  for (std::size_t i = 0; i < s_.size(); ++i) {
    interruption_point();  // k products of n entries since the last
    std::copy_n(elements_.begin() + static_cast<std::ptrdiff_t>(i * n_), n_, current.begin());
    for (LetterId a = 0; a < k_; ++a) {
      const Entry* letter = &letter_table_[a * n_];
      for (std::size_t q = 0; q < n_; ++q) product[q] = letter[current[q]];
      s_.cayley_.push_back(find_or_insert(product.data(), static_cast<ElementId>(i), a));
    }
  }
}

template <class Entry>
void SemigroupEnumerator<Entry>::find_identity() {
  if (s_.with_identity_) {
    for (LetterId a = 0; a < k_; ++a) s_.letter_element_.push_back(s_.cayley_[a]);
    s_.identity_ = 0;
    s_.identity_in_semigroup_ =
        std::find(s_.cayley_.begin(), s_.cayley_.end(), ElementId{0}) != s_.cayley_.end();
  } else {
    Transformation identity(n_);
    for (StateId q = 0; q < n_; ++q) identity[q] = q;
    s_.identity_ = s_.index_of(identity);
    s_.identity_in_semigroup_ = s_.identity_.has_value();
  }
}

template <class Entry>
ElementId SemigroupEnumerator<Entry>::find_or_insert(const Entry* t, ElementId parent,
                                                     LetterId letter) {
  std::uint32_t hash = hash_transformation(t, n_);
  std::size_t mask = s_.table_.size() - 1;
  for (std::size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    auto& entry = s_.table_[slot];
    if (entry.element_plus_one == 0) break;
    if (entry.hash == hash) {
      ElementId e = entry.element_plus_one - 1;
      if (std::equal(t, t + n_,
                     elements_.begin() + static_cast<std::ptrdiff_t>(std::size_t{e} * n_)))
        return e;
    }
  }
  if (s_.size() >= max_elements_) throw_limit();
  if (elements_.size() + n_ > elements_.capacity()) check_growth();
  auto id = static_cast<ElementId>(s_.size());
  elements_.insert(elements_.end(), t, t + n_);
  s_.parent_.push_back(parent);
  s_.parent_letter_.push_back(letter);
  if (2 * (s_.size() + 1) > s_.table_.size()) grow();
  insert_slot(hash, id);
  return id;
}

template <class Entry>
void SemigroupEnumerator<Entry>::insert_slot(std::uint32_t hash, ElementId id) {
  std::size_t mask = s_.table_.size() - 1;
  std::size_t slot = hash & mask;
  while (s_.table_[slot].element_plus_one != 0) slot = (slot + 1) & mask;
  s_.table_[slot] = {id + 1, hash};
}

template <class Entry>
void SemigroupEnumerator<Entry>::grow() {
  std::vector<TransformationSemigroup::Slot> old(s_.table_.size() * 2);
  old.swap(s_.table_);
  for (const auto& entry : old)
    if (entry.element_plus_one != 0) insert_slot(entry.hash, entry.element_plus_one - 1);
}

// The element arrays are about to double: the doubling must fit beside what the process
// already holds (a decomposition's tables, when `krc decompose` reports the semigroup's size),
// not only the third of the budget the elements may take (issue 31).
template <class Entry>
void SemigroupEnumerator<Entry>::check_growth() const {
  const std::uint64_t more =
      saturating_mul(std::max<std::uint64_t>(s_.size(), 1024), bytes_per_element_);
  if (more < (std::uint64_t{1} << 20)) return;
  check_resident_growth("the transformation " +
                            std::string(s_.with_identity_ ? "monoid" : "semigroup") + " of '" +
                            automaton_.name() + "' (" +
                            with_thousands(static_cast<long long>(s_.size())) + " elements so far)",
                        more);
}

template <class Entry>
void SemigroupEnumerator<Entry>::throw_limit() const {
  std::string what = s_.with_identity_ ? "monoid" : "semigroup";
  std::string message = "the transformation " + what + " of '" + automaton_.name() +
                        "' has more than " + with_thousands(static_cast<long long>(max_elements_)) +
                        " elements";
  if (bytes_limited_)
    message += " of " + std::to_string(n_) + " states each, more than fit in " +
               (budget_limited_
                    ? "the memory budget (--max-memory " + byte_size_text(memory_budget()) + ")"
                    : "the memory allowed for them (" +
                          byte_size_text(bytes_per_element_ * max_elements_) + ")");
  message += "; it is too large to enumerate element by element";
  if (!bytes_limited_) message += " within the element limit";
  throw LimitError(message);
}

TransformationSemigroup TransformationSemigroup::generate(const Automaton& automaton,
                                                          bool with_identity,
                                                          std::size_t max_elements,
                                                          std::size_t max_bytes) {
  TransformationSemigroup s;
  s.degree_ = automaton.state_count();
  s.letters_ = automaton.letter_count();
  s.with_identity_ = with_identity;
  // Indices are 32-bit; one slot value is reserved for "empty".
  max_elements = std::min<std::size_t>(max_elements, std::numeric_limits<ElementId>::max() - 1);
  if (s.degree_ <= 0x100) {
    s.elements_ = std::vector<std::uint8_t>{};
    SemigroupEnumerator<std::uint8_t>(s, automaton, max_elements, max_bytes).run();
  } else if (s.degree_ <= 0x10000) {
    s.elements_ = std::vector<std::uint16_t>{};
    SemigroupEnumerator<std::uint16_t>(s, automaton, max_elements, max_bytes).run();
  } else {
    s.elements_ = std::vector<std::uint32_t>{};
    SemigroupEnumerator<std::uint32_t>(s, automaton, max_elements, max_bytes).run();
  }
  return s;
}

std::size_t TransformationSemigroup::semigroup_size() const {
  if (!with_identity_) return size();
  return identity_in_semigroup_ ? size() : size() - 1;
}

std::size_t TransformationSemigroup::monoid_size() const {
  if (with_identity_) return size();
  return identity_ ? size() : size() + 1;
}

Transformation TransformationSemigroup::element(ElementId i) const {
  if (i >= size()) throw std::out_of_range("semigroup element index out of range");
  return std::visit(
      [&](const auto& store) {
        auto first = store.begin() + static_cast<std::ptrdiff_t>(std::size_t{i} * degree_);
        return Transformation(first, first + static_cast<std::ptrdiff_t>(degree_));
      },
      elements_);
}

StateId TransformationSemigroup::image(ElementId i, StateId q) const {
  return std::visit([&](const auto& store) { return StateId{store[std::size_t{i} * degree_ + q]}; },
                    elements_);
}

std::optional<TransformationSemigroup::ElementId> TransformationSemigroup::index_of(
    std::span<const StateId> t) const {
  if (t.size() != degree_ || table_.empty()) return std::nullopt;
  for (StateId q : t)
    if (q >= degree_) return std::nullopt;
  std::uint32_t hash = hash_transformation(t.data(), t.size());
  std::size_t mask = table_.size() - 1;
  return std::visit(
      [&](const auto& store) -> std::optional<ElementId> {
        for (std::size_t slot = hash & mask;; slot = (slot + 1) & mask) {
          const Slot& entry = table_[slot];
          if (entry.element_plus_one == 0) return std::nullopt;
          if (entry.hash != hash) continue;
          ElementId e = entry.element_plus_one - 1;
          auto first = store.begin() + static_cast<std::ptrdiff_t>(std::size_t{e} * degree_);
          if (std::equal(t.begin(), t.end(), first)) return e;
        }
      },
      elements_);
}

TransformationSemigroup::ElementId TransformationSemigroup::multiply(ElementId i,
                                                                     ElementId j) const {
  Transformation product(degree_);
  for (StateId q = 0; q < degree_; ++q) product[q] = image(j, image(i, q));
  auto found = index_of(product);
  // The set is closed under products; a miss means the object is corrupt.
  if (!found) throw std::logic_error("semigroup product not found: the enumeration is incomplete");
  return *found;
}

std::vector<TransformationSemigroup::ElementId> TransformationSemigroup::multiply_row(
    ElementId i) const {
  // Elements are numbered in BFS order, so a parent's product is known before its children's.
  std::vector<ElementId> row(size());
  for (std::size_t j = 0; j < row.size(); ++j) {
    const LetterId a = parent_letter_[j];
    if (a == kNoLetter) {  // the adjoined identity
      row[j] = i;
      continue;
    }
    const ElementId base = parent_[j] == kNoParent ? i : row[parent_[j]];
    row[j] = right_multiply(base, a);
  }
  return row;
}

std::vector<LetterId> TransformationSemigroup::shortest_word(ElementId i) const {
  std::vector<LetterId> word;
  for (ElementId e = i; e != kNoParent; e = parent_.at(e))
    if (parent_letter_.at(e) != kNoLetter) word.push_back(parent_letter_[e]);
  std::reverse(word.begin(), word.end());
  return word;
}

bool TransformationSemigroup::is_permutation(ElementId i) const { return rank(i) == degree_; }

std::size_t TransformationSemigroup::rank(ElementId i) const {
  std::vector<bool> hit(degree_, false);
  std::size_t count = 0;
  for (StateId q = 0; q < degree_; ++q) {
    StateId r = image(i, q);
    if (!hit[r]) {
      hit[r] = true;
      ++count;
    }
  }
  return count;
}

bool TransformationSemigroup::is_idempotent(ElementId i) const {
  for (StateId q = 0; q < degree_; ++q)
    if (image(i, image(i, q)) != image(i, q)) return false;
  return true;
}

bool TransformationSemigroup::is_aperiodic() const {
  // A transformation generates a group part of order lcm(cycle lengths of its functional
  // graph); aperiodic means every cycle of every element is a fixed point.
  enum : std::uint8_t { kUnseen, kOnPath, kDone };
  std::vector<std::uint8_t> mark(degree_);
  std::vector<StateId> path;
  return std::visit(
      [&](const auto& store) {
        for (std::size_t e = 0; e < size(); ++e) {
          const auto* f = store.data() + e * degree_;
          std::fill(mark.begin(), mark.end(), kUnseen);
          for (StateId start = 0; start < degree_; ++start) {
            if (mark[start] != kUnseen) continue;
            path.clear();
            StateId x = start;
            while (mark[x] == kUnseen) {
              mark[x] = kOnPath;
              path.push_back(x);
              x = f[x];
            }
            if (mark[x] == kOnPath && f[x] != x) return false;  // a cycle of length > 1
            for (StateId p : path) mark[p] = kDone;
          }
        }
        return true;
      },
      elements_);
}

std::size_t TransformationSemigroup::group_of_units_order() const {
  std::size_t count = 0;
  for (std::size_t e = 0; e < size(); ++e) count += is_permutation(static_cast<ElementId>(e));
  return count;
}

bool TransformationSemigroup::is_group() const {
  return size() > 0 && group_of_units_order() == size();
}

}  // namespace krc
