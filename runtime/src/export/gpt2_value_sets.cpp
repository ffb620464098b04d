// Finite value sets (gpt2_value_sets.hpp) for the GPT-2 export's exactness proof.
#include "export/gpt2_value_sets.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

#include "export/gpt2_value_sets_detail.hpp"

namespace krc {

namespace value_sets {

// Row-major m's entries as lists per row: (column, value).
Weights rows_of(const SparseMatrix& m) {
  Weights w(static_cast<std::size_t>(m.rows()));
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      w[static_cast<std::size_t>(it.row())].emplace_back(static_cast<int>(it.col()), it.value());
  return w;
}

// The same per column, (row, value): the rows of m's transpose, in the same order.
Weights columns_of(const SparseMatrix& m) { return rows_of(SparseMatrix(m.transpose())); }

// The groups' coordinates, in the order enumerate's records list them.
std::vector<int> joint_coords(const ValueSets& s, const std::vector<int>& groups) {
  std::vector<int> cs;
  for (int g : groups)
    for (int c : s.coords[static_cast<std::size_t>(g)]) cs.push_back(c);
  return cs;
}

// Replaces the groups by one over their coordinates holding `values`.
void merge(ValueSets& s, const std::vector<int>& groups, Set values) {
  const std::vector<int> cs = joint_coords(s, groups);
  const auto g = static_cast<int>(s.coords.size());
  for (int old : groups) {
    s.coords[static_cast<std::size_t>(old)].clear();
    s.values[static_cast<std::size_t>(old)].clear();
  }
  for (int c : cs) s.group[static_cast<std::size_t>(c)] = g;
  s.coords.push_back(cs);
  s.values.push_back(std::move(values));
}

// The coordinates marked `leave` are followed by intervals alone from now on; their groups keep
// the other coordinates' values (a projection).
void release(ValueSets& s, const std::vector<bool>& leave) {
  for (std::size_t g = 0; g < s.coords.size(); ++g) {
    std::vector<std::size_t> keep;
    for (std::size_t i = 0; i < s.coords[g].size(); ++i)
      if (!leave[static_cast<std::size_t>(s.coords[g][i])]) keep.push_back(i);
    if (keep.size() == s.coords[g].size()) continue;
    std::set<Vector> projected;
    for (const Vector& v : s.values[g]) {
      Vector p;
      for (std::size_t i : keep) p.push_back(v[i]);
      projected.insert(std::move(p));
    }
    std::vector<int> cs;
    for (std::size_t i : keep) cs.push_back(s.coords[g][i]);
    for (int c : s.coords[g])
      if (leave[static_cast<std::size_t>(c)]) s.group[static_cast<std::size_t>(c)] = -1;
    s.coords[g] = cs;
    s.values[g] = keep.empty() ? Set{} : Set(projected.begin(), projected.end());
  }
}

// Union-find over groups (and one node for the coordinates with no set).
struct Components {
  std::vector<int> parent;
  explicit Components(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int a) {
    while (parent[static_cast<std::size_t>(a)] != a)
      a = parent[static_cast<std::size_t>(a)] =
          parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(a)])];
    return a;
  }
  void join(int a, int b) { parent[static_cast<std::size_t>(find(a))] = find(b); }
};

// Groups the units by the coordinates they touch (`touches[u]`); a coordinate with no set joins
// the component that touches it to the interval node. Only components that write are returned.
std::vector<Component> components(const ValueSets& s, const std::vector<std::vector<int>>& touches,
                                  const std::vector<int>& written) {
  const auto interval = static_cast<int>(s.coords.size());
  Components dsu(s.coords.size() + 1);
  auto node = [&](int c) {
    const int g = s.group[static_cast<std::size_t>(c)];
    return g >= 0 ? g : interval;
  };
  for (const std::vector<int>& t : touches)
    for (int c : t) dsu.join(node(c), node(t.front()));
  std::map<int, Component> by_root;
  for (int c : written) {
    Component& k = by_root[dsu.find(node(c))];
    k.written.push_back(c);
    k.interval = k.interval || node(c) == interval;
  }
  for (int g = 0; g < interval; ++g)
    if (!s.coords[static_cast<std::size_t>(g)].empty() && by_root.count(dsu.find(g)))
      by_root[dsu.find(g)].groups.push_back(g);
  for (std::size_t u = 0; u < touches.size(); ++u)
    if (!touches[u].empty() && by_root.count(dsu.find(node(touches[u].front()))))
      by_root[dsu.find(node(touches[u].front()))].units.push_back(static_cast<int>(u));
  std::vector<Component> out;
  for (auto& [root, k] : by_root) {
    k.interval = k.interval || root == dsu.find(interval);
    out.push_back(std::move(k));
  }
  return out;
}

void gather(const Vector& x, const std::vector<int>& cs, Vector& out) {
  for (int c : cs) out.push_back(x[static_cast<std::size_t>(c)]);
}

std::optional<Set> joint_values(const ValueSets& s, const std::vector<int>& cs) {
  std::map<int, std::vector<std::size_t>> by_group;  // group -> positions in cs
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const int g = s.group[static_cast<std::size_t>(cs[i])];
    if (g < 0) return std::nullopt;
    by_group[g].push_back(i);
  }
  Set out{Vector(cs.size(), 0.0f)};
  for (const auto& [g, at] : by_group) {
    const std::vector<int>& gc = s.coords[static_cast<std::size_t>(g)];
    std::vector<std::size_t> index;
    for (std::size_t i : at)
      index.push_back(
          static_cast<std::size_t>(std::find(gc.begin(), gc.end(), cs[i]) - gc.begin()));
    std::set<Vector> projected;
    for (const Vector& v : s.values[static_cast<std::size_t>(g)]) {
      Vector p;
      for (std::size_t j : index) p.push_back(v[j]);
      projected.insert(std::move(p));
    }
    Set next;
    if (static_cast<double>(out.size()) * static_cast<double>(projected.size()) > 4096)
      return std::nullopt;
    for (const Vector& partial : out)
      for (const Vector& p : projected) {
        Vector v = partial;
        for (std::size_t k = 0; k < at.size(); ++k) v[at[k]] = p[k];
        next.push_back(std::move(v));
      }
    out = std::move(next);
  }
  return out;
}

}  // namespace value_sets

namespace {

using namespace value_sets;

// Head h's values at any position: every combination of the groups its value reads.
std::optional<Set> head_values(const Network& n, const AttentionHead& h, const ValueSets& s) {
  if (s.coords.empty()) return Set{};
  const Weights reads = columns_of(h.value);
  std::vector<int> groups;
  for (const auto& column : reads)
    for (const auto& [c, w] : column) {
      const int g = s.group[static_cast<std::size_t>(c)];
      if (g < 0) return std::nullopt;
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    }
  return enumerate(s, groups, {}, Vector(static_cast<std::size_t>(n.d_model()), 0.0f),
                   [&](const Vector& x, const std::vector<const Vector*>&, Vector& v) {
                     for (const auto& column : reads) {
                       ExactSum sum;
                       for (const auto& [c, w] : column)
                         sum.add(static_cast<double>(w) * x[static_cast<std::size_t>(c)]);
                       if (!sum.exact()) return false;
                       v.push_back(static_cast<float>(sum.sum));
                     }
                     return true;
                   });
}

// x[c] += the heads' values times their output weights, for every coordinate the component
// writes; false when a sum is not provably exact.
bool add_heads(const Component& k, const Weights& feeds, const std::vector<const Vector*>& chosen,
               Vector& x) {
  for (int c : k.written) {
    ExactSum sum;
    sum.add(x[static_cast<std::size_t>(c)]);
    for (const auto& [hj, w] : feeds[static_cast<std::size_t>(c)]) {
      const auto at = std::find(k.units.begin(), k.units.end(), hj >> 16);
      const Vector& v = *chosen[static_cast<std::size_t>(at - k.units.begin())];
      sum.add(static_cast<double>(w) * v[static_cast<std::size_t>(hj & 0xffff)]);
    }
    if (!sum.exact()) return false;
    x[static_cast<std::size_t>(c)] = static_cast<float>(sum.sum);
  }
  return true;
}

// Whether every coordinate in `cs` takes one value in its group (then base[c] is it).
bool constant(const ValueSets& s, const std::vector<int>& cs, Vector& base) {
  for (int c : cs) {
    const auto g = static_cast<std::size_t>(s.group[static_cast<std::size_t>(c)]);
    const auto i = static_cast<std::size_t>(std::find(s.coords[g].begin(), s.coords[g].end(), c) -
                                            s.coords[g].begin());
    if (s.values[g].empty()) return false;
    for (const Vector& v : s.values[g])
      if (v[i] != s.values[g].front()[i]) return false;
    base[static_cast<std::size_t>(c)] = s.values[g].front()[i];
  }
  return true;
}

// The values a head with weights exactly 1 and 0 may copy: at a later position, or with `also`
// at position 0 as well.
std::optional<Set> selected_values(const Network& n, const AttentionHead& h, const ValueSets& s,
                                   const ValueSets* also) {
  std::optional<Set> later = head_values(n, h, s);
  if (!later || !also) return later;
  const std::optional<Set> first = head_values(n, h, *also);
  if (!first) return std::nullopt;
  std::set<Vector> both(later->begin(), later->end());
  both.insert(first->begin(), first->end());
  return Set(both.begin(), both.end());
}

// Where a head's value vector has too many joint values (the selector rule leaves one group per
// coordinate: 2^252 joint values for a 42-state binary prefix), each value dimension's own
// values: the joint values of the coordinates its column reads, independent across dimensions
// (a superset). At a later position, or with `also` at position 0 as well.
std::optional<std::vector<std::set<float>>> dimension_values(const AttentionHead& h,
                                                             const ValueSets& s,
                                                             const ValueSets* also) {
  const Weights reads = columns_of(h.value);
  std::vector<std::set<float>> out(reads.size());
  for (const ValueSets* at : {&s, also}) {
    if (!at) continue;
    for (std::size_t j = 0; j < reads.size(); ++j) {
      std::vector<int> cs;
      for (const auto& [c, w] : reads[j]) cs.push_back(c);
      const std::optional<Set> joint = joint_values(*at, cs);
      if (!joint) return std::nullopt;
      for (const Vector& x : *joint) {
        ExactSum sum;
        for (std::size_t i = 0; i < cs.size(); ++i)
          sum.add(static_cast<double>(reads[j][i].second) * x[i]);
        if (!sum.exact()) return std::nullopt;
        out[j].insert(static_cast<float>(sum.sum));
      }
    }
  }
  return out;
}

}  // namespace

ValueSets initial_value_sets(const Network& n, bool bos) {
  ValueSets s;
  const auto d = static_cast<std::size_t>(n.d_model());
  s.group.assign(d, -1);
  if (bos) {  // one vector: the BOS token at position 0
    Vector v;
    for (int c = 0; c < n.d_model(); ++c)
      v.push_back(n.token_embedding(0, c) + n.position_embedding(0, c));
    s.coords.emplace_back(static_cast<std::size_t>(d));
    std::iota(s.coords[0].begin(), s.coords[0].end(), 0);
    std::fill(s.group.begin(), s.group.end(), 0);
    s.values.push_back({v});
    return s;
  }
  const Eigen::Index letters = n.token_embedding.rows() > 1 ? 1 : 0,
                     tokens = n.token_embedding.rows();
  const Eigen::Index positions = n.position_embedding.rows(), first = positions > 1 ? 1 : 0;
  std::vector<int> fixed;  // coordinates whose position embedding is the same at every position
  for (int c = 0; c < n.d_model(); ++c) {
    const auto column = n.position_embedding.col(c).tail(positions - first);
    if ((column.array() == column(0)).all()) {
      fixed.push_back(c);
      continue;
    }
    std::set<float> seen;  // fl(token + position), as the frameworks add
    for (Eigen::Index t = letters; t < tokens && seen.size() <= kMaxPositional; ++t)
      for (Eigen::Index p = first; p < positions; ++p)
        seen.insert(n.token_embedding(t, c) + n.position_embedding(p, c));
    if (seen.size() > kMaxPositional) continue;
    s.group[static_cast<std::size_t>(c)] = static_cast<int>(s.coords.size());
    s.coords.push_back({c});
    s.values.emplace_back();
    for (float v : seen) s.values.back().push_back({v});
  }
  std::set<Vector> rows;
  for (Eigen::Index t = letters; t < tokens; ++t) {
    Vector v;
    for (int c : fixed) v.push_back(n.token_embedding(t, c) + n.position_embedding(first, c));
    rows.insert(std::move(v));
  }
  for (int c : fixed) s.group[static_cast<std::size_t>(c)] = static_cast<int>(s.coords.size());
  s.coords.push_back(fixed);
  s.values.emplace_back(rows.begin(), rows.end());
  return s;
}

void attend_value_sets(const Network& n, std::size_t index, const std::vector<bool>& selecting,
                       ValueSets& s, const ValueSets* also) {
  const std::vector<AttentionHead>& heads = n.layers[index].heads;
  const auto d = static_cast<std::size_t>(n.d_model());
  std::vector<bool> leave(d, false);
  std::vector<std::optional<Set>> values(heads.size());
  std::vector<std::vector<int>> touches(heads.size());
  std::vector<int> written;
  Weights feeds(d);  // per coordinate: (head * 2^16 + value index, weight)
  for (std::size_t h = 0; h < heads.size(); ++h) {
    if (selecting[h]) values[h] = selected_values(n, heads[h], s, also);
    const Weights out = rows_of(heads[h].output);
    for (std::size_t j = 0; j < out.size(); ++j)
      for (const auto& [c, w] : out[j]) {
        if (!values[h]) leave[static_cast<std::size_t>(c)] = true;
        touches[h].push_back(c);
        if (feeds[static_cast<std::size_t>(c)].empty()) written.push_back(c);
        feeds[static_cast<std::size_t>(c)].emplace_back(static_cast<int>(h << 16 | j), w);
      }
  }
  // The per-dimension fallback: a coordinate that held one value and is written only by
  // selecting heads whose joint values could not be enumerated becomes a group of its own, its
  // value the old one plus every combination of the dimensions that feed it.
  std::vector<std::pair<int, Set>> singles;
  {
    std::vector<std::optional<std::vector<std::set<float>>>> dims(heads.size());
    for (std::size_t h = 0; h < heads.size(); ++h)
      if (selecting[h] && !values[h]) dims[h] = dimension_values(heads[h], s, also);
    Vector one(d, 0.0f);
    for (int c : written) {
      const auto& in = feeds[static_cast<std::size_t>(c)];
      const bool by_dims = std::all_of(in.begin(), in.end(), [&](const auto& f) {
        return static_cast<bool>(dims[static_cast<std::size_t>(f.first >> 16)]);
      });
      if (!by_dims || s.group[static_cast<std::size_t>(c)] < 0 || !constant(s, {c}, one)) continue;
      std::set<float> sums{one[static_cast<std::size_t>(c)]};
      bool ok = true;
      for (const auto& [hj, w] : in) {
        const std::set<float>& v =
            (*dims[static_cast<std::size_t>(hj >> 16)])[static_cast<std::size_t>(hj & 0xffff)];
        std::set<float> next;
        for (float a : sums)
          for (float b : v) {
            ExactSum sum;
            sum.add(a);
            sum.add(static_cast<double>(w) * b);
            ok = ok && sum.exact();
            next.insert(static_cast<float>(sum.sum));
          }
        sums = std::move(next);
        ok = ok && sums.size() <= kMaxPositional;
        if (!ok) break;
      }
      if (!ok) continue;
      Set set;
      for (float v : sums) set.push_back({v});
      singles.emplace_back(c, std::move(set));
    }
  }
  std::vector<Component> joined, fresh;
  Vector base(d, 0.0f);  // the written coordinates' one value, where they have one
  for (Component& k : components(s, touches, written)) {
    for (int c : k.written) k.interval = k.interval || leave[static_cast<std::size_t>(c)];
    (!k.interval && constant(s, k.written, base) ? fresh : joined).push_back(std::move(k));
  }
  auto evaluate = [&](const Component& k, bool alone) {
    std::vector<const Set*> extra;
    for (int h : k.units) extra.push_back(&*values[static_cast<std::size_t>(h)]);
    const std::vector<int> kept = alone ? k.written : joint_coords(s, k.groups);
    return enumerate(s, alone ? std::vector<int>{} : k.groups, extra,
                     alone ? base : Vector(d, 0.0f),
                     [&](Vector& x, const std::vector<const Vector*>& chosen, Vector& record) {
                       if (alone)  // no group refills them: each combination starts from base
                         for (int c : k.written)
                           x[static_cast<std::size_t>(c)] = base[static_cast<std::size_t>(c)];
                       return add_heads(k, feeds, chosen, x) && (gather(x, kept, record), true);
                     });
  };
  // Written coordinates that held one value before hold, after, a function of the heads' values
  // alone: a group of their own, whose values are not multiplied by the rest of theirs.
  std::vector<std::optional<Set>> alone;
  std::vector<bool> moved(d, false);
  for (const Component& k : fresh) {
    alone.push_back(evaluate(k, true));
    for (int c : k.written) (alone.back() ? moved : leave)[static_cast<std::size_t>(c)] = true;
  }
  apply(s, joined, leave, [&](const Component& k) { return evaluate(k, false); });
  release(s, moved);
  for (auto& [c, set] : singles) {
    if (s.group[static_cast<std::size_t>(c)] >= 0) continue;  // followed by its component
    s.group[static_cast<std::size_t>(c)] = static_cast<int>(s.coords.size());
    s.coords.push_back({c});
    s.values.push_back(std::move(set));
  }
  for (std::size_t i = 0; i < fresh.size(); ++i)
    if (alone[i]) {
      for (int c : fresh[i].written)
        s.group[static_cast<std::size_t>(c)] = static_cast<int>(s.coords.size());
      s.coords.push_back(fresh[i].written);
      s.values.push_back(std::move(*alone[i]));
    }
}

double group_squares(const ValueSets& s, int g) {
  double most = 0;
  for (const Vector& v : s.values[static_cast<std::size_t>(g)]) {
    double sum = 0;
    for (float x : v) sum += static_cast<double>(x) * x;
    most = std::max(most, sum);
  }
  return most;
}

}  // namespace krc
