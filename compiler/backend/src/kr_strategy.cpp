#include "krc/kr_strategy.hpp"

#include <functional>
#include <map>
#include <optional>

#include "krc/attention_heads.hpp"
#include "krc/compile.hpp"
#include "krc/polycyclic_group.hpp"
#include "krc/prefix_scan.hpp"
#include "krc/residue.hpp"

namespace krc {

namespace {

bool is_identity(const std::vector<int>& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int>(i)) return false;
  return true;
}

std::string join_states(const Automaton& a, const std::vector<StateId>& states) {
  std::string s = "{";
  for (std::size_t i = 0; i < states.size(); ++i) s += (i ? "," : "") + a.state_name(states[i]);
  return s + "}";
}

// One slot's counters: the running product of its holonomy group as Z_p exponents.
struct SlotCounters {
  int slot = -1;
  PolycyclicGroup group;
  std::map<std::vector<int>, int> symbol_of;  // non-identity permutation -> symbol index
  Subspace element;                           // one-hot of the permutation at position t
  std::vector<Subspace> now, before;          // exponents at t and at t-1 (one-hots)
};

class KrBuilder {
 public:
  KrBuilder(const HolonomyDecomposition& dec, int max_len, const KrOptions& options)
      : dec_(dec),
        automaton_(dec.automaton()),
        program_(vocabulary_of(automaton_), automaton_.states(), max_len),
        features_(program_),
        options_(options) {
    tokens_ = Categorical::one_hot(features_.tokens(), automaton_.letters());
  }

  Program build(std::vector<KrLevelPlan>* plan) {
    initial_ = dec_.encode(automaton_.initial());
    if (options_.time_shifted_memory && memory_only()) {
      build_memory_cascade(plan);
      decode();
      return std::move(program_);
    }
    for (int d = 0; d < dec_.level_count(); ++d) {
      KrLevelPlan level_plan;
      level_plan.level = d + 1;
      build_level(d, level_plan);
      if (d + 1 < dec_.level_count()) fetch_previous(d);
      if (plan) plan->push_back(std::move(level_plan));
    }
    decode();
    return std::move(program_);
  }

 private:
  std::string tag(int d) const { return "level " + std::to_string(d + 1); }

  std::vector<std::string> value_labels(int d) const {
    const Level& level = dec_.level(d);
    std::vector<std::string> labels;
    for (int v = 0; v < level.width; ++v) {
      if (v == level.dummy) {
        labels.push_back("-");
      } else {
        const Slot& slot = level.slots[level.slot_of[v]];
        labels.push_back(join_states(automaton_, slot.tiles[level.tile_of[v]]));
      }
    }
    return labels;
  }

  // The lookup from (letter, upper coordinates at t-1) to whatever the level needs to know
  // about its action. Level 1 depends on the letter alone, so its lookup is the embedding.
  void add_transitions(int d, const std::function<Terms(const LevelAction&)>& outputs,
                       const Terms& at_bos) {
    for (auto [dim, w] : at_bos) program_.embed_token(0, dim, w);
    const auto& table = dec_.table(d);
    const auto letters = static_cast<LetterId>(automaton_.letter_count());
    if (d == 0) {
      for (LetterId a = 0; a < letters; ++a)
        for (auto [dim, w] : outputs(table.action.at(0).at(a))) program_.embed_token(a + 1, dim, w);
      return;
    }
    MlpOp lookup;
    lookup.name = tag(d) + ": action of (letter, upper coordinates at t-1)";
    std::vector<const Categorical*> inputs{&tokens_};
    for (int j = 0; j < d; ++j) inputs.push_back(&previous_[j]);
    for (std::size_t u = 0; u < table.upper.size(); ++u)
      for (LetterId a = 0; a < letters; ++a) {
        Terms out = outputs(table.action[u][a]);
        if (out.empty()) continue;
        std::vector<int> values{static_cast<int>(a)};
        values.insert(values.end(), table.upper[u].begin(), table.upper[u].end());
        add_lookup_unit(lookup, inputs, values, out);
      }
    if (lookup.units > 0) program_.add(std::move(lookup), tag(d) + ": transitions");
  }

  // Whether every level is a memory unit (resets, and no permutation but the identity) or
  // constant (no resets, and no permutation moves the initial value's slot).
  bool memory_only() const {
    for (int d = 0; d < dec_.level_count(); ++d) {
      const Level& level = dec_.level(d);
      const int x0 = initial_[d];
      bool resets = false, moves_all = false, moves_initial = false;
      for (const auto& row : dec_.table(d).action)
        for (const auto& act : row) {
          if (act.reset) {
            resets = true;
          } else if (!is_identity(act.permutation)) {
            moves_all = true;
            moves_initial = moves_initial || (x0 != level.dummy && level.slot_of[x0] == act.slot);
          }
        }
      if (resets ? moves_all : moves_initial) return false;
    }
    return true;
  }

  // A cascade of memory units in one layer per level (plus one). Level d's action at t needs
  // the upper levels' values at t-1, and fetching those from t-1 would cost a second attention
  // layer per level. Instead each level is also computed s steps in the past, for every s the
  // levels below need: the value at time t-s is the reset value at the latest position j <= t
  // whose flag says "time j-s reset this level", and that flag is a lookup of the letter at
  // j-s (fetched in layer 0) and the upper values at time j-s-1 (the same construction one
  // step further back, one layer earlier). Level d is needed at shifts 0..K-1-d; times <= 0
  // (the fetch lands on BOS) mean "reset to the initial value".
  void build_memory_cascade(std::vector<KrLevelPlan>* plan) {
    const int levels = dec_.level_count();
    if (levels == 0) return;  // one state: decode() writes it
    const auto letters = static_cast<LetterId>(automaton_.letter_count());
    auto& layout = program_.layout();

    // The letter at t-s (s >= 1) with a BOS category for t-s <= 0: fetched in layer 0. The
    // lookups of levels 2.. read it up to s = levels - 2; the fetch from t-(levels-1) only
    // carries level 1's flags.
    std::vector<Subspace> letter_back(levels);
    std::vector<Categorical> letter_at(levels);
    std::vector<std::vector<Entry>> fetch_copy(levels);
    letter_at[0] = tokens_;
    std::vector<std::string> letter_labels = automaton_.letters();
    letter_labels.push_back("<bos>");
    for (int sh = 1; sh + 1 < levels; ++sh) {
      letter_back[sh] = layout.allocate("letter at t-" + std::to_string(sh), letter_labels);
      for (LetterId a = 0; a < letters; ++a)
        fetch_copy[sh].push_back({features_.tokens()[a], letter_back[sh][a], 1.0f});
      fetch_copy[sh].push_back({features_.bos()[0], letter_back[sh][letters], 1.0f});
      letter_at[sh] = Categorical::one_hot(letter_back[sh], letter_labels);
    }

    // value_at[d][sh]: level d's value at time t - sh. First every block is allocated and
    // the embedding and fetch entries written; then the ops are added in an order the
    // scheduler can follow (fetches; then per level its lookups, then its memory heads).
    std::vector<std::vector<Categorical>> value_at(levels);
    struct Memory {
      int shift;
      Subspace flag, reset_value, value;
    };
    std::vector<std::vector<Memory>> memories(levels);
    for (int d = 0; d < levels; ++d) {
      const Level& level = dec_.level(d);
      const auto labels = value_labels(d);
      const int x0 = initial_[d];
      const auto& table = dec_.table(d);
      KrLevelPlan level_plan;
      level_plan.level = d + 1;
      for (const auto& slot : level.slots) {
        level_plan.tiles.push_back(static_cast<int>(slot.tiles.size()));
        level_plan.groups.push_back(slot.group.name);
      }
      level_plan.counters.resize(level.slots.size());
      for (const auto& row : table.action)
        for (const auto& act : row) level_plan.resets = level_plan.resets || act.reset;
      level_plan.mode = level_plan.resets ? "memory" : "constant";
      if (plan) plan->push_back(level_plan);

      const int shifts = levels - d;
      if (!level_plan.resets) {
        Categorical x;
        x.labels = labels;
        x.indicator.resize(level.width);
        x.indicator[x0].emplace_back(features_.one()[0], 1.0f);
        value_at[d].assign(shifts, x);
        continue;
      }
      for (int sh = 0; sh < shifts; ++sh) {
        const std::string when = sh == 0 ? "" : " at t-" + std::to_string(sh);
        Memory m{sh, layout.allocate(tag(d) + " reset flag" + when, {}),
                 layout.allocate(tag(d) + " reset value" + when, labels),
                 layout.allocate(tag(d) + " value" + when, labels)};
        // Times <= 0: reset to the initial value.
        if (sh == 0) {
          program_.embed_token(0, m.flag[0], 1.0f);
          program_.embed_token(0, m.reset_value[x0], 1.0f);
        } else {
          fetch_copy[sh].push_back({features_.bos()[0], m.flag[0], 1.0f});
          fetch_copy[sh].push_back({features_.bos()[0], m.reset_value[x0], 1.0f});
        }
        // Level 1: the letter alone decides, so the embedding (sh = 0) or the fetch writes it.
        if (d == 0)
          for (LetterId a = 0; a < letters; ++a) {
            const auto& act = table.action.at(0).at(a);
            if (!act.reset) continue;
            if (sh == 0) {
              program_.embed_token(a + 1, m.flag[0], 1.0f);
              program_.embed_token(a + 1, m.reset_value[act.reset_to], 1.0f);
            } else {
              fetch_copy[sh].push_back({features_.tokens()[a], m.flag[0], 1.0f});
              fetch_copy[sh].push_back({features_.tokens()[a], m.reset_value[act.reset_to], 1.0f});
            }
          }
        value_at[d].push_back(Categorical::one_hot(m.value, labels));
        memories[d].push_back(m);
      }
    }
    for (int sh = 1; sh < levels; ++sh)
      if (!fetch_copy[sh].empty())
        program_.add(fetch_from_offset(features_, sh, fetch_copy[sh],
                                       "fetch letter from t-" + std::to_string(sh)),
                     "letters at t-1.." + std::to_string(levels - 1));
    for (int d = 0; d < levels; ++d) {
      const auto& table = dec_.table(d);
      for (const auto& m : memories[d]) {
        const std::string when = m.shift == 0 ? "" : " at t-" + std::to_string(m.shift);
        if (d > 0) {
          MlpOp lookup;
          lookup.name = tag(d) + when + ": action of (letter, upper values one step earlier)";
          std::vector<const Categorical*> inputs{&letter_at[m.shift]};
          for (int j = 0; j < d; ++j) inputs.push_back(&value_at[j][m.shift + 1]);
          for (std::size_t u = 0; u < table.upper.size(); ++u)
            for (LetterId a = 0; a < letters; ++a) {
              const auto& act = table.action[u][a];
              if (!act.reset) continue;
              std::vector<int> values{static_cast<int>(a)};
              values.insert(values.end(), table.upper[u].begin(), table.upper[u].end());
              add_lookup_unit(lookup, inputs, values,
                              {{m.flag[0], 1.0f}, {m.reset_value[act.reset_to], 1.0f}});
            }
          if (lookup.units > 0) program_.add(std::move(lookup), tag(d) + ": transitions");
        }
        std::vector<Entry> copy;
        for (int v = 0; v < m.value.width; ++v)
          copy.push_back({m.reset_value[v], m.value[v], 1.0f});
        program_.add(latest_flagged(features_, m.flag[0], copy,
                                    tag(d) + ": memory (latest reset" + when + ")"),
                     tag(d) + ": memory");
      }
    }
    for (int d = 0; d < levels; ++d) coordinate_.push_back(value_at[d][0]);
  }

  void build_level(int d, KrLevelPlan& plan) {
    const Level& level = dec_.level(d);
    const auto& table = dec_.table(d);
    bool resets = false;
    std::vector<std::vector<std::vector<int>>> perms(level.slots.size());
    for (const auto& row : table.action)
      for (const auto& act : row) {
        if (act.reset) {
          resets = true;
        } else if (!is_identity(act.permutation)) {
          auto& list = perms[act.slot];
          if (std::find(list.begin(), list.end(), act.permutation) == list.end())
            list.push_back(act.permutation);
        }
      }
    plan.resets = resets;
    for (const auto& slot : level.slots) {
      plan.tiles.push_back(static_cast<int>(slot.tiles.size()));
      plan.groups.push_back(slot.group.name);
    }

    // Which slots' products matter: all of them when the level resets, otherwise only the
    // initial value's slot (without resets the value never leaves it).
    const int x0 = initial_[d];
    std::vector<std::optional<PolycyclicGroup>> groups(level.slots.size());
    bool counters_possible = true;
    for (std::size_t s = 0; s < level.slots.size(); ++s) {
      bool active = resets || (x0 != level.dummy && level.slot_of[x0] == static_cast<int>(s));
      if (!active || perms[s].empty()) continue;
      groups[s] =
          PolycyclicGroup::build(perms[s], static_cast<int>(level.slots[s].tiles.size()),
                                 static_cast<std::size_t>(options_.max_counter_group_order));
      if (!groups[s]) counters_possible = false;
    }
    plan.counters.resize(level.slots.size());
    for (std::size_t s = 0; s < groups.size(); ++s)
      if (groups[s]) plan.counters[s] = groups[s]->primes();

    if (!counters_possible) {
      plan.mode = "scan";
      plan.counters.assign(level.slots.size(), {});
      build_scan_level(d);
      return;
    }
    bool any_group = false;
    for (const auto& g : groups) any_group = any_group || g.has_value();
    if (!resets && !any_group) {
      plan.mode = "constant";
      Categorical x;
      x.labels = value_labels(d);
      x.indicator.resize(level.width);
      x.indicator[x0].emplace_back(features_.one()[0], 1.0f);
      coordinate_.push_back(std::move(x));
      return;
    }
    plan.mode = any_group ? "counters" : "memory";
    build_counter_level(d, resets, groups, perms);
  }

  void build_counter_level(int d, bool resets, std::vector<std::optional<PolycyclicGroup>>& groups,
                           const std::vector<std::vector<std::vector<int>>>& perms) {
    const Level& level = dec_.level(d);
    const auto labels = value_labels(d);
    auto& layout = program_.layout();
    const int x0 = initial_[d];

    Subspace flag, reset_value;
    if (resets) {
      flag = layout.allocate_scalar(tag(d) + " reset flag");
      reset_value = layout.allocate(tag(d) + " reset value", labels);
    }
    std::vector<SlotCounters> slots;
    for (std::size_t s = 0; s < groups.size(); ++s) {
      if (!groups[s]) continue;
      SlotCounters c{static_cast<int>(s), std::move(*groups[s]), {}, {}, {}, {}};
      std::vector<std::string> element_labels;
      for (const auto& p : perms[s]) {
        c.symbol_of.emplace(p, static_cast<int>(element_labels.size()));
        std::string label = "(";
        for (std::size_t i = 0; i < p.size(); ++i) label += (i ? " " : "") + std::to_string(p[i]);
        element_labels.push_back(label + ")");
      }
      c.element = layout.allocate(tag(d) + " slot " + std::to_string(s + 1) + " permutation",
                                  element_labels);
      slots.push_back(std::move(c));
    }

    Terms at_bos;
    if (resets) at_bos = {{flag[0], 1.0f}, {reset_value[x0], 1.0f}};
    add_transitions(
        d,
        [&](const LevelAction& act) -> Terms {
          if (act.reset) return {{flag[0], 1.0f}, {reset_value[act.reset_to], 1.0f}};
          for (const auto& c : slots)
            if (c.slot == act.slot) {
              auto it = c.symbol_of.find(act.permutation);
              if (it != c.symbol_of.end()) return {{c.element[it->second], 1.0f}};
            }
          return {};
        },
        at_bos);

    for (auto& c : slots) build_counters(d, c);

    Categorical x;
    x.labels = labels;
    x.indicator.resize(level.width);
    if (resets) {
      Subspace copied = layout.allocate(tag(d) + " value at latest reset", labels);
      std::vector<Entry> copy;
      for (int v = 0; v < level.width; ++v) copy.push_back({reset_value[v], copied[v], 1.0f});
      std::vector<std::vector<Subspace>> at_reset(slots.size());
      for (std::size_t c = 0; c < slots.size(); ++c)
        for (std::size_t i = 0; i < slots[c].now.size(); ++i) {
          const Subspace& now = slots[c].now[i];
          std::vector<std::string> residues;
          for (int r = 0; r < now.width; ++r) residues.push_back(std::to_string(r));
          Subspace there = layout.allocate(now.name + " at latest reset", residues);
          for (int r = 0; r < now.width; ++r) copy.push_back({now[r], there[r], 1.0f});
          at_reset[c].push_back(there);
        }
      program_.add(latest_flagged(features_, flag[0], copy, tag(d) + ": memory (latest reset)"),
                   tag(d) + ": memory");
      for (int v = 0; v < level.width; ++v)
        if (v == level.dummy || !slot_has_counters(slots, level.slot_of[v]))
          x.indicator[v].emplace_back(copied[v], 1.0f);
      if (!slots.empty()) {
        Subspace out = layout.allocate(tag(d) + " coordinate", labels);
        MlpOp combine;
        combine.name = tag(d) + ": reset value . (product at reset)^-1 . (product now)";
        Categorical copied_value = Categorical::one_hot(copied, labels);
        for (std::size_t c = 0; c < slots.size(); ++c) {
          const auto& g = slots[c].group;
          std::vector<Categorical> then_cat, now_cat;
          for (const auto& s : at_reset[c]) then_cat.push_back(Categorical::one_hot(s, {}));
          for (const auto& s : slots[c].now) now_cat.push_back(Categorical::one_hot(s, {}));
          std::vector<const Categorical*> inputs{&copied_value};
          for (const auto& cat : then_cat) inputs.push_back(&cat);
          for (const auto& cat : now_cat) inputs.push_back(&cat);
          const int first = level.first_value[slots[c].slot];
          const int tiles = static_cast<int>(level.slots[slots[c].slot].tiles.size());
          for (int tile = 0; tile < tiles; ++tile)
            for (int then = 0; then < g.order(); ++then)
              for (int now = 0; now < g.order(); ++now) {
                int z = g.multiply(g.inverse(then), now);
                std::vector<int> values{first + tile};
                for (int e : g.exponents(then)) values.push_back(e);
                for (int e : g.exponents(now)) values.push_back(e);
                add_lookup_unit(combine, inputs, values, {{out[first + g.element(z)[tile]], 1.0f}});
              }
          for (int tile = 0; tile < tiles; ++tile)
            x.indicator[first + tile].emplace_back(out[first + tile], 1.0f);
        }
        program_.add(std::move(combine), tag(d) + ": coordinate");
      }
    } else {
      // No resets: x(t) = x(0) . product(t), all in the initial value's slot.
      const auto& c = slots.front();
      const auto& g = c.group;
      const int first = level.first_value[c.slot];
      const int tile0 = level.tile_of[x0];
      if (g.series_length() == 1) {
        for (int y = 0; y < g.order(); ++y)
          x.indicator[first + g.element(y)[tile0]].emplace_back(c.now[0][g.exponents(y)[0]], 1.0f);
      } else {
        Subspace out = layout.allocate(tag(d) + " coordinate", labels);
        MlpOp combine;
        combine.name = tag(d) + ": initial value . product now";
        std::vector<Categorical> now_cat;
        for (const auto& s : c.now) now_cat.push_back(Categorical::one_hot(s, {}));
        std::vector<const Categorical*> inputs;
        for (const auto& cat : now_cat) inputs.push_back(&cat);
        for (int y = 0; y < g.order(); ++y)
          add_lookup_unit(combine, inputs, g.exponents(y),
                          {{out[first + g.element(y)[tile0]], 1.0f}});
        for (int v = 0; v < level.width; ++v) x.indicator[v].emplace_back(out[v], 1.0f);
        program_.add(std::move(combine), tag(d) + ": coordinate");
      }
    }
    coordinate_.push_back(std::move(x));
  }

  static bool slot_has_counters(const std::vector<SlotCounters>& slots, int slot) {
    for (const auto& c : slots)
      if (c.slot == slot) return true;
    return false;
  }

  // Counter i: sum of its increments (a prefix-sum head), then residues of the count now and
  // before this position (the latter feeds the increments of the counters below).
  void build_counters(int d, SlotCounters& c) {
    auto& layout = program_.layout();
    const auto& g = c.group;
    const int k = g.series_length();
    const std::string name = tag(d) + " slot " + std::to_string(c.slot + 1);
    Categorical element;
    element.indicator.resize(c.symbol_of.size());
    element.labels.resize(c.symbol_of.size());
    std::vector<int> element_of_symbol(c.symbol_of.size());
    for (const auto& [perm, symbol] : c.symbol_of) {
      element.indicator[symbol] = {{c.element[symbol], 1.0f}};
      element_of_symbol[symbol] = *g.index_of(perm);
    }
    std::vector<Categorical> before;
    for (int i = 0; i < k; ++i) {
      const int p = g.prime(i);
      const std::string counter =
          name + " counter " + std::to_string(i + 1) + " (Z" + std::to_string(p) + ")";
      Terms increment;
      if (i == 0) {
        // The top counter's increment is a homomorphism of the new factor alone: linear.
        for (std::size_t s = 0; s < element_of_symbol.size(); ++s)
          if (int w = g.increment(0, element_of_symbol[s], {}); w != 0)
            increment.emplace_back(c.element[static_cast<int>(s)], static_cast<float>(w));
      } else {
        Subspace inc = layout.allocate_scalar(counter + " increment");
        MlpOp lookup;
        lookup.name = counter + ": increment from (factor, counters above at t-1)";
        std::vector<const Categorical*> inputs{&element};
        for (int j = 0; j < i; ++j) inputs.push_back(&before[j]);
        for (std::size_t s = 0; s < element_of_symbol.size(); ++s)
          for (int idx = 0; idx < g.prefix_count(i); ++idx) {
            auto prev = g.prefix_from_index(i, idx);
            int w = g.increment(i, element_of_symbol[s], prev);
            if (w == 0) continue;
            std::vector<int> values{static_cast<int>(s)};
            values.insert(values.end(), prev.begin(), prev.end());
            add_lookup_unit(lookup, inputs, values, {{inc[0], static_cast<float>(w)}});
          }
        program_.add(std::move(lookup), counter);
        increment = {{inc[0], 1.0f}};
      }
      Subspace count = layout.allocate_scalar(counter + " count");
      program_.add(prefix_sum(features_, increment, count[0], counter + ": sum of increments"),
                   counter);

      std::vector<std::string> residues;
      for (int r = 0; r < p; ++r) residues.push_back(std::to_string(r));
      const long max_value = static_cast<long>(p - 1) * program_.max_len();
      MlpOp residue;
      residue.name = counter + ": residue";
      residue.begin_block(counter + ": count mod " + std::to_string(p));
      Subspace now = layout.allocate(counter, residues);
      add_residue_units(residue, {{count[0], 1.0f}}, p, max_value, now);
      c.now.push_back(now);
      if (i + 1 < k) {
        residue.begin_block(counter + ": count before t mod " + std::to_string(p));
        Subspace prev = layout.allocate(counter + " at t-1", residues);
        Terms z{{count[0], 1.0f}};
        for (auto [dim, w] : increment) z.emplace_back(dim, -w);
        add_residue_units(residue, z, p, max_value, prev);
        c.before.push_back(prev);
        before.push_back(Categorical::one_hot(prev, residues));
      }
      program_.add(std::move(residue), counter);
    }
  }

  void build_scan_level(int d) {
    const Level& level = dec_.level(d);
    const auto labels = value_labels(d);
    std::map<Transformation, int> symbol_of;
    PrefixScanSpec spec;
    spec.name = tag(d) + " scan";
    spec.set_labels = labels;
    spec.initial = static_cast<StateId>(initial_[d]);
    auto transformation = [&](const LevelAction& act) {
      Transformation f(level.width);
      for (int v = 0; v < level.width; ++v) {
        if (act.reset)
          f[v] = static_cast<StateId>(act.reset_to);
        else if (v != level.dummy && level.slot_of[v] == act.slot)
          f[v] =
              static_cast<StateId>(level.first_value[act.slot] + act.permutation[level.tile_of[v]]);
        else
          f[v] = static_cast<StateId>(v);
      }
      return f;
    };
    for (const auto& row : dec_.table(d).action)
      for (const auto& act : row) {
        auto f = transformation(act);
        if (symbol_of.emplace(f, static_cast<int>(spec.symbols.size())).second) {
          spec.symbols.push_back(f);
          spec.symbol_labels.push_back("f" + std::to_string(spec.symbols.size()));
        }
      }
    PrefixScan scan(features_, spec);
    add_transitions(
        d,
        [&](const LevelAction& act) {
          return scan.symbol_terms(symbol_of.at(transformation(act)));
        },
        scan.identity_terms());
    scan.build(tag(d) + " scan step");
    coordinate_.push_back(scan.result());
  }

  // The levels below read this level's coordinate at t-1.
  void fetch_previous(int d) {
    const auto& x = coordinate_[d];
    Subspace prev = program_.layout().allocate(tag(d) + " coordinate at t-1", x.labels);
    std::vector<Entry> copy;
    for (int v = 0; v < x.size(); ++v)
      for (auto [dim, w] : x.indicator[v]) copy.push_back({dim, prev[v], w});
    program_.add(fetch_from_offset(features_, 1, copy, tag(d) + ": fetch coordinate from t-1"),
                 tag(d + 1) + ": upper coordinates at t-1");
    previous_.push_back(Categorical::one_hot(prev, x.labels));
  }

  void decode() {
    const int levels = dec_.level_count();
    if (levels == 0) {
      program_.unembed(features_.one()[0], static_cast<int>(dec_.decode({})), 1.0f);
      return;
    }
    if (levels == 1) {
      std::vector<bool> seen(dec_.level(0).width, false);
      for (const auto& c : dec_.reachable()) {
        if (seen[c[0]]) continue;
        seen[c[0]] = true;
        int q = static_cast<int>(dec_.decode(c));
        for (auto [dim, w] : coordinate_[0].indicator[c[0]]) program_.unembed(dim, q, w);
      }
      return;
    }
    Subspace state = program_.layout().allocate("state", automaton_.states());
    MlpOp decode;
    decode.name = "decode coordinates into the state";
    std::vector<const Categorical*> inputs;
    for (const auto& x : coordinate_) inputs.push_back(&x);
    for (const auto& c : dec_.reachable())
      add_lookup_unit(decode, inputs, c, {{state[static_cast<int>(dec_.decode(c))], 1.0f}});
    program_.add(std::move(decode), "decode");
    for (int q = 0; q < state.width; ++q) program_.unembed(state[q], q, 1.0f);
  }

  const HolonomyDecomposition& dec_;
  const Automaton& automaton_;
  Program program_;
  Features features_;
  KrOptions options_;
  Categorical tokens_;
  Coordinates initial_;
  std::vector<Categorical> coordinate_;  // x_d(t) per level
  std::vector<Categorical> previous_;    // x_d(t-1) per level (one-hot copies)
};

}  // namespace

Program kr_program(const HolonomyDecomposition& decomposition, int max_len,
                   const KrOptions& options, std::vector<KrLevelPlan>* plan) {
  return KrBuilder(decomposition, max_len, options).build(plan);
}

}  // namespace krc
