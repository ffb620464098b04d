// A cascade of memory units only (CascadeForm::TimeShiftedMemory: aperiodic automata such as
// gridworld and flip-flops, every holonomy group trivial), in K + 1 layers for K levels.
//
// Level d's action at t needs the upper levels' values at t-1, and fetching those from t-1
// would cost a second attention layer per level. Instead each level is also computed s steps
// in the past, for every s the levels below need: the value at time t-s is the reset value at
// the latest position j <= t whose flag says "time j-s reset this level", and that flag is a
// lookup of the letter at j-s (fetched in layer 0) and the upper values at time j-s-1 (the
// same construction one step further back, one layer earlier). Level d is needed at shifts
// 0..K-1-d; times <= 0 (the fetch lands on BOS) mean "reset to the initial value".
//
// Legend: K levels, d a level (0-based), sh a shift (the value at t - sh), x0 the initial
// coordinates.
#include "primitives/attention_heads.hpp"
#include "strategies/kr/cascade_context.hpp"

namespace krc {

namespace {

struct Memory {
  int shift;
  Subspace flag, reset_value, value;
};

class MemoryCascadeBuilder {
 public:
  explicit MemoryCascadeBuilder(CascadeContext& ctx)
      : ctx_(ctx), levels_(ctx.dec.level_count()), letters_(ctx.automaton.letter_count()) {}

  void build(const KrPlan& plan) {
    if (levels_ == 0) return;  // one state: the decoder writes it
    allocate_letters_back();
    value_at_.resize(levels_);
    memories_.resize(levels_);
    for (int d = 0; d < levels_; ++d) allocate_level(d, plan.levels[d].resets);
    for (int sh = 1; sh < levels_; ++sh)
      if (!fetch_copy_[sh].empty())
        ctx_.program.add(fetch_from_offset(ctx_.features, sh, fetch_copy_[sh],
                                           "fetch letter from t-" + std::to_string(sh),
                                           Role{RoleKind::LetterBack, 0, 0, 0, sh}),
                         "letters at t-1.." + std::to_string(levels_ - 1));
    for (int d = 0; d < levels_; ++d)
      for (const auto& m : memories_[d]) add_memory(d, m);
    for (int d = 0; d < levels_; ++d) ctx_.coordinate[d] = value_at_[d][0];
  }

 private:
  static std::string when(int shift) { return shift == 0 ? "" : " at t-" + std::to_string(shift); }

  // The letter at t-s (s >= 1) with a BOS category for t-s <= 0, fetched in layer 0. The
  // lookups of levels 2.. read it up to s = K - 2; the fetch from t-(K-1) only carries level
  // 1's flags.
  void allocate_letters_back() {
    fetch_copy_.resize(levels_);
    letter_at_.resize(levels_);
    letter_at_[0] = ctx_.tokens;
    std::vector<std::string> labels = ctx_.automaton.letters();
    labels.push_back("<bos>");
    for (int sh = 1; sh + 1 < levels_; ++sh) {
      Subspace back = ctx_.program.layout().allocate("letter at t-" + std::to_string(sh), labels,
                                                     Role{RoleKind::LetterBack, 0, 0, 0, sh});
      for (LetterId a = 0; a < letters_; ++a)
        fetch_copy_[sh].push_back({ctx_.features.tokens()[a], back[a], 1.0f});
      fetch_copy_[sh].push_back({ctx_.features.bos()[0], back[letters_], 1.0f});
      letter_at_[sh] = Categorical::one_hot(back, labels);
    }
  }

  // value_at_[d][sh]: level d's value at time t - sh, a memory unit per shift (or the initial
  // value when the level never resets). Resets of level 1 depend on the letter alone, so the
  // embedding (sh = 0) or the letter fetch (sh >= 1) writes its flags.
  void allocate_level(int d, bool resets) {
    const int shifts = levels_ - d;
    if (!resets) {
      value_at_[d].assign(shifts, ctx_.constant_coordinate(d));
      return;
    }
    auto& layout = ctx_.program.layout();
    const auto labels = ctx_.value_labels(d);
    const int x0 = ctx_.initial[d];
    for (int sh = 0; sh < shifts; ++sh) {
      Memory m{sh,
               layout.allocate_scalar(ctx_.tag(d) + " reset flag" + when(sh),
                                      ctx_.role(RoleKind::ResetFlag, d, 0, 0, sh)),
               layout.allocate(ctx_.tag(d) + " reset value" + when(sh), labels,
                               ctx_.role(RoleKind::ResetValue, d, 0, 0, sh)),
               layout.allocate(ctx_.tag(d) + " value" + when(sh), labels,
                               ctx_.role(RoleKind::Memory, d, 0, 0, sh))};
      write_initial_reset(m, x0);
      if (d == 0) write_first_level_resets(m);
      value_at_[d].push_back(Categorical::one_hot(m.value, labels));
      memories_[d].push_back(m);
    }
  }

  // Times <= 0: reset to the initial value.
  void write_initial_reset(const Memory& m, int x0) {
    if (m.shift == 0) {
      ctx_.program.embed_token(0, m.flag[0], 1.0f);
      ctx_.program.embed_token(0, m.reset_value[x0], 1.0f);
    } else {
      fetch_copy_[m.shift].push_back({ctx_.features.bos()[0], m.flag[0], 1.0f});
      fetch_copy_[m.shift].push_back({ctx_.features.bos()[0], m.reset_value[x0], 1.0f});
    }
  }

  void write_first_level_resets(const Memory& m) {
    for (LetterId a = 0; a < letters_; ++a) {
      const auto& act = ctx_.dec.table(0).action.at(0).at(a);
      if (!act.reset) continue;
      if (m.shift == 0) {
        ctx_.program.embed_token(a + 1, m.flag[0], 1.0f);
        ctx_.program.embed_token(a + 1, m.reset_value[act.reset_to], 1.0f);
      } else {
        fetch_copy_[m.shift].push_back({ctx_.features.tokens()[a], m.flag[0], 1.0f});
        fetch_copy_[m.shift].push_back(
            {ctx_.features.tokens()[a], m.reset_value[act.reset_to], 1.0f});
      }
    }
  }

  // Level d at shift sh: (d > 0) the lookup of the letter at t-sh and the upper values at
  // t-sh-1 into the reset flag and value, then the memory head.
  void add_memory(int d, const Memory& m) {
    if (d > 0) add_reset_lookup(d, m);
    std::vector<Entry> copy;
    for (int v = 0; v < m.value.width; ++v) copy.push_back({m.reset_value[v], m.value[v], 1.0f});
    ctx_.program.add(latest_flagged(ctx_.features, m.flag[0], copy,
                                    ctx_.tag(d) + ": memory (latest reset" + when(m.shift) + ")",
                                    ctx_.role(RoleKind::Memory, d, 0, 0, m.shift)),
                     ctx_.tag(d) + ": memory");
  }

  void add_reset_lookup(int d, const Memory& m) {
    const auto& table = ctx_.dec.table(d);
    MlpOp lookup;
    lookup.name =
        ctx_.tag(d) + when(m.shift) + ": action of (letter, upper values one step earlier)";
    lookup.role = ctx_.role(RoleKind::Transition, d, 0, 0, m.shift);
    std::vector<const Categorical*> inputs{&letter_at_[m.shift]};
    for (int j = 0; j < d; ++j) inputs.push_back(&value_at_[j][m.shift + 1]);
    for (std::size_t u = 0; u < table.upper.size(); ++u)
      for (LetterId a = 0; a < letters_; ++a) {
        const auto& act = table.action[u][a];
        if (!act.reset) continue;
        std::vector<int> values{static_cast<int>(a)};
        values.insert(values.end(), table.upper[u].begin(), table.upper[u].end());
        add_lookup_unit(lookup, inputs, values,
                        {{m.flag[0], 1.0f}, {m.reset_value[act.reset_to], 1.0f}});
      }
    if (lookup.units > 0) ctx_.program.add(std::move(lookup), ctx_.tag(d) + ": transitions");
  }

  CascadeContext& ctx_;
  const int levels_;
  const LetterId letters_;
  std::vector<std::vector<Entry>> fetch_copy_;  // per shift: what the letter fetch copies
  std::vector<Categorical> letter_at_;          // per shift: the letter at t - sh
  std::vector<std::vector<Categorical>> value_at_;
  std::vector<std::vector<Memory>> memories_;
};

}  // namespace

void build_memory_cascade(CascadeContext& ctx, const KrPlan& plan) {
  MemoryCascadeBuilder(ctx).build(plan);
}

}  // namespace krc
