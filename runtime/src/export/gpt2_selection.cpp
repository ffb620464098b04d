// positional_score_gap (gpt2_selection.hpp): the proven score gap of a head whose query and key
// are functions of the position alone, by enumerating every (query, key) pair of positions.
#include "export/gpt2_selection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "export/gpt2_value_sets_detail.hpp"

namespace krc {

namespace {

// Past this max-len the enumeration (max_len^2 / 2 pairs) is not attempted.
constexpr int kMaxEnumerated = 4096;

// A head-side vector (query or key) at every position: its value, computed in double, and a
// bound on how far a float32 framework's sum can be from it.
struct Sides {
  std::vector<std::vector<double>> value;
  std::vector<std::vector<double>> error;
};

// Coordinate c's value at every position, or false when it is not a function of the position:
// written by an earlier sublayer, or not the same for every letter token. Position 0 holds
// BOS and only position 0 does (the export's words are BOS then letters).
bool positional_column(const Network& n, int c, std::vector<float>& x) {
  for (Eigen::Index t = 2; t < n.token_embedding.rows(); ++t)
    if (n.token_embedding(t, c) != n.token_embedding(1, c)) return false;
  const Eigen::Index letter = n.token_embedding.rows() > 1 ? 1 : 0;
  x.resize(static_cast<std::size_t>(n.position_embedding.rows()));
  for (Eigen::Index p = 0; p < n.position_embedding.rows(); ++p)
    x[static_cast<std::size_t>(p)] = n.token_embedding(p == 0 ? 0 : letter, c) +
                                     n.position_embedding(p, c);  // float32, as frameworks add
  return true;
}

// m (d_model x width) applied to every position; false when it reads a non-positional
// coordinate.
bool side(const Network& n, const SparseMatrix& m, const std::vector<bool>& written, Sides& s) {
  const auto positions = static_cast<std::size_t>(n.position_embedding.rows());
  const auto width = static_cast<std::size_t>(m.cols());
  s.value.assign(positions, std::vector<double>(width, 0.0));
  std::vector<std::vector<double>> mass(positions, std::vector<double>(width, 0.0));
  std::vector<long long> terms(width, 1);
  std::vector<float> x;
  for (int c = 0; c < m.outerSize(); ++c) {
    SparseMatrix::InnerIterator it(m, c);
    if (!it) continue;
    if (written[static_cast<std::size_t>(c)] || !positional_column(n, c, x)) return false;
    for (; it; ++it) {
      const auto j = static_cast<std::size_t>(it.col());
      ++terms[j];
      for (std::size_t p = 0; p < positions; ++p) {
        s.value[p][j] += static_cast<double>(it.value()) * x[p];
        mass[p][j] += std::fabs(static_cast<double>(it.value()) * x[p]);
      }
    }
  }
  s.error = mass;  // float32 summation in any order: within (terms + 1) 2^-24 of the mass
  for (std::size_t p = 0; p < positions; ++p)
    for (std::size_t j = 0; j < width; ++j)
      s.error[p][j] = static_cast<double>(terms[j] + 1) * 0x1p-24 * mass[p][j];
  return true;
}

// A bound on |float32 score - exact score| / scale for query position t and key position j.
double score_error(const Sides& q, const Sides& k, std::size_t t, std::size_t j) {
  double e = 0, mass = 0;
  const std::size_t width = q.value[t].size();
  for (std::size_t d = 0; d < width; ++d) {
    const double qa = std::fabs(q.value[t][d]) + q.error[t][d];
    const double ka = std::fabs(k.value[j][d]) + k.error[j][d];
    e += qa * k.error[j][d] + ka * q.error[t][d];
    mass += qa * ka;
  }
  return e + static_cast<double>(width + 2) * 0x1p-24 * mass;
}

// Past this many (query, key, key value) triples the flagged enumeration is not attempted.
constexpr double kMaxFlaggedTriples = 0x1p28;

// The key at every position and every joint value of the set coordinates it reads (index
// position * |values| + value: position 0 from `first`, the later ones from `later`), with the
// float32 rounding bound of its sums; false when it reads a coordinate that is neither a function
// of the position nor in both sets.
bool flagged_keys(const Network& n, const SparseMatrix& key, const std::vector<bool>& written,
                  const ValueSets& first, const ValueSets& later, Sides& out,
                  std::size_t& per_position) {
  std::vector<std::vector<float>> positional(static_cast<std::size_t>(key.rows()));
  std::vector<int> set_coords;
  std::vector<int> set_index(static_cast<std::size_t>(key.rows()), -1);
  for (int c = 0; c < key.outerSize(); ++c) {
    SparseMatrix::InnerIterator it(key, c);
    if (!it) continue;
    const auto at = static_cast<std::size_t>(c);
    if (!written[at] && positional_column(n, c, positional[at])) continue;
    if (first.group[at] < 0 || later.group[at] < 0) return false;
    set_index[at] = static_cast<int>(set_coords.size());
    set_coords.push_back(c);
  }
  const std::optional<value_sets::Set> at_bos = value_sets::joint_values(first, set_coords);
  const std::optional<value_sets::Set> from_one = value_sets::joint_values(later, set_coords);
  if (!at_bos || !from_one || at_bos->size() != 1 || from_one->empty()) return false;
  per_position = from_one->size();
  const auto positions = static_cast<std::size_t>(n.position_embedding.rows());
  const auto width = static_cast<std::size_t>(key.cols());
  out.value.assign(positions * per_position, std::vector<double>(width, 0.0));
  out.error.assign(positions * per_position, std::vector<double>(width, 0.0));
  for (std::size_t p = 0; p < positions; ++p)
    for (std::size_t g = 0; g < (p == 0 ? 1 : per_position); ++g) {
      const std::vector<float>& v = p == 0 ? at_bos->front() : (*from_one)[g];
      std::vector<double> mass(width, 0.0), terms(width, 1.0);
      auto& value = out.value[p * per_position + g];
      for (int c = 0; c < key.outerSize(); ++c)
        for (SparseMatrix::InnerIterator it(key, c); it; ++it) {
          const auto at = static_cast<std::size_t>(c);
          const double x =
              set_index[at] >= 0 ? v[static_cast<std::size_t>(set_index[at])] : positional[at][p];
          const auto d = static_cast<std::size_t>(it.col());
          value[d] += static_cast<double>(it.value()) * x;
          mass[d] += std::fabs(static_cast<double>(it.value()) * x);
          terms[d] += 1;
        }
      for (std::size_t d = 0; d < width; ++d)
        out.error[p * per_position + g][d] = (terms[d] + 1) * 0x1p-24 * mass[d];
    }
  return true;
}

}  // namespace

std::optional<double> flagged_score_gap(const Network& n, const AttentionHead& h,
                                        const std::vector<bool>& written, const ValueSets& first,
                                        const ValueSets& later) {
  if (n.max_len > kMaxEnumerated) return std::nullopt;
  Sides q, k;
  std::size_t per = 0;
  if (!side(n, h.query, written, q) || !flagged_keys(n, h.key, written, first, later, k, per))
    return std::nullopt;
  const double positions = static_cast<double>(q.value.size());
  if (positions * positions / 2 * static_cast<double>(per) > kMaxFlaggedTriples)
    return std::nullopt;
  double gap = std::numeric_limits<double>::infinity();
  const double scale = std::fabs(static_cast<double>(n.attention_scale));
  std::vector<std::pair<double, std::size_t>> scores;  // (score, key position)
  for (std::size_t t = 1; t < q.value.size(); ++t) {
    scores.clear();
    double error = 0;
    for (std::size_t j = 0; j <= t; ++j)
      for (std::size_t g = 0; g < (j == 0 ? 1 : per); ++g) {
        const std::size_t at = j * per + g;
        double s = 0;
        for (std::size_t d = 0; d < q.value[t].size(); ++d) s += q.value[t][d] * k.value[at][d];
        scores.emplace_back(s, j);
        error = std::max(error, score_error(q, k, t, at));
      }
    std::sort(scores.begin(), scores.end());
    // Two scores of different positions are at least as far apart as some neighbouring pair
    // of different positions between them in this order.
    for (std::size_t i = 1; i < scores.size(); ++i)
      if (scores[i].second != scores[i - 1].second)
        gap = std::min(gap,
                       scale * (scores[i].first - scores[i - 1].first - 2 * error) * (1 - 0x1p-40));
  }
  return gap;
}

std::optional<double> positional_score_gap(const Network& n, const AttentionHead& h,
                                           const std::vector<bool>& written) {
  if (n.max_len > kMaxEnumerated) return std::nullopt;
  Sides q, k;
  if (!side(n, h.query, written, q) || !side(n, h.key, written, k)) return std::nullopt;
  double gap = std::numeric_limits<double>::infinity();
  const double scale = std::fabs(static_cast<double>(n.attention_scale));
  for (std::size_t t = 1; t < q.value.size(); ++t) {
    double best = -std::numeric_limits<double>::infinity(), second = best, error = 0;
    for (std::size_t j = 0; j <= t; ++j) {
      double s = 0;
      for (std::size_t d = 0; d < q.value[t].size(); ++d) s += q.value[t][d] * k.value[j][d];
      if (s > best) {
        second = best;
        best = s;
      } else {
        second = std::max(second, s);
      }
      error = std::max(error, score_error(q, k, t, j));
    }
    // Both the winner and a runner-up may move by `error` (the double sums' own error is
    // far below the float32 bound).
    gap = std::min(gap, scale * (best - second - 2 * error) * (1 - 0x1p-40));
  }
  return gap;
}

}  // namespace krc
