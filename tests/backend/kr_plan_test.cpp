// The kr plan is decided before any weight is written. Its depth and each level's sublayers
// are the scheduler's placement of the cascade's operations, so an operation a builder adds
// moves them without a change to the planner (the first test adds some through the builders'
// hook); the network written from the plan has them (where each level's heads and MLP blocks
// sit, read from their typed roles); and the modes follow the decomposition's group facts.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "ir/assemble.hpp"
#include "ir/schedule.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/backend/compile.hpp"
#include "krc/decompose/holonomy.hpp"
#include "strategies/kr/kr_strategy.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

CompileResult compile_kr(const Automaton& a, int max_len, bool time_shifted = true) {
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = max_len;
  options.kr.time_shifted_memory = time_shifted;
  return compile(a, options);
}

// level -> [first, last] sublayer of the heads (2L) and MLP blocks (2L + 1) tagged with it.
std::map<int, std::pair<int, int>> sublayers_by_level(const Network& net) {
  std::map<int, std::pair<int, int>> out;
  auto note = [&](const Role& role, int sublayer) {
    if (role.level == 0) return;
    auto [it, fresh] = out.emplace(role.level, std::make_pair(sublayer, sublayer));
    if (!fresh) {
      it->second.first = std::min(it->second.first, sublayer);
      it->second.second = std::max(it->second.second, sublayer);
    }
  };
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    for (const auto& h : net.layers[i].heads) note(h.role, 2 * static_cast<int>(i));
    if (net.layers[i].mlp)
      for (const auto& b : net.layers[i].mlp->blocks) note(b.role, 2 * static_cast<int>(i) + 1);
  }
  return out;
}

void check_plan_against_network(const Automaton& a, int max_len, bool time_shifted) {
  const CompileResult result = compile_kr(a, max_len, time_shifted);
  if (result.walk) {  // gridworld: a walk, no cascade (clamped_walk_test checks its widths)
    CHECK(!result.kr);
    CHECK(result.walk->layers == static_cast<int>(result.network.layers.size()));
    return;
  }
  REQUIRE(result.kr);
  const KrPlan& plan = *result.kr;
  CHECK(plan.layers == static_cast<int>(result.network.layers.size()));
  const auto placed = sublayers_by_level(result.network);
  for (const auto& level : plan.levels) {
    CAPTURE(level.level);
    const auto it = placed.find(level.level);
    if (level.first_sublayer < 0) {
      CHECK(it == placed.end());
      continue;
    }
    REQUIRE(it != placed.end());
    CHECK(it->second.first == level.first_sublayer);
    CHECK(it->second.second == level.last_sublayer);
  }
}

// A builder hook that adds `count` MLPs in a chain after level `level`'s operations: the first
// reads the level's coordinate, each next one what the one before wrote. Nothing else reads
// them, so only this level's span and possibly the depth can move.
std::function<void(CascadeContext&, int)> chain_after(int level, int count) {
  return [=](CascadeContext& ctx, int d) {
    if (d != level) return;
    Terms input = ctx.coordinate[d].indicator.at(0);
    for (int i = 0; i < count; ++i) {
      const Role role{RoleKind::Coordinate, d + 1};
      const Subspace out =
          ctx.program.layout().allocate_scalar("test chain " + std::to_string(i), role);
      MlpOp mlp;
      mlp.name = "test chain " + std::to_string(i);
      mlp.role = role;
      mlp.add_unit(input, 0.0f, {{out[0], 1.0f}});
      ctx.program.add(std::move(mlp), ctx.tag(d));
      input = {{out[0], 1.0f}};
    }
  };
}

KrPlan planned(const HolonomyDecomposition& dec, int max_len,
               std::function<void(CascadeContext&, int)> hook = {}) {
  KrCascade cascade = decide_cascade(dec, max_len, KrOptions{});
  cascade.after_level = std::move(hook);
  const Program program = build_and_place(cascade);
  // The network written from these operations has the depth the plan reports.
  CHECK(static_cast<int>(assemble(program, schedule(program)).layers.size()) ==
        cascade.plan.layers);
  return cascade.plan;
}

}  // namespace

TEST_CASE("kr plan: an operation added to a level's builder moves the plan's placement") {
  // One level of counters, per level: its last write (the comb's coordinate) is in an MLP, and
  // each MLP of a chain after it takes the next MLP sublayer, two further on; the decoding is
  // a linear readout, so the depth grows by one layer per MLP.
  for (const char* name : {"cyclic_3", "parity", "quaternion"}) {
    CAPTURE(name);
    const HolonomyDecomposition dec =
        HolonomyDecomposition::compute(test::reference_automaton(name));
    REQUIRE(dec.level_count() == 1);
    const KrPlan plain = planned(dec, 64);
    REQUIRE(plain.form == CascadeForm::PerLevel);
    REQUIRE(plain.levels[0].last_sublayer % 2 == 1);
    for (int count : {1, 3}) {
      CAPTURE(count);
      const KrPlan chained = planned(dec, 64, chain_after(0, count));
      CHECK(chained.layers == plain.layers + count);
      CHECK(chained.levels[0].first_sublayer == plain.levels[0].first_sublayer);
      CHECK(chained.levels[0].last_sublayer == plain.levels[0].last_sublayer + 2 * count);
    }
  }
  // Several levels: a chain after the top level that runs past every other operation reads
  // nothing the levels below read, so they stay where they were, and the chain's end (the top
  // level's last sublayer, an MLP) is the network's last sublayer.
  int several = 0;
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    const HolonomyDecomposition dec =
        HolonomyDecomposition::compute(test::reference_automaton(name));
    if (dec.level_count() < 2 || dec.level(0).width > 64) continue;
    const KrPlan plain = planned(dec, 64);
    if (plain.levels[0].mode == LevelMode::Constant) continue;
    ++several;
    const KrPlan chained = planned(dec, 64, chain_after(0, plain.layers + 1));
    for (std::size_t d = 1; d < plain.levels.size(); ++d) {
      CHECK(chained.levels[d].first_sublayer == plain.levels[d].first_sublayer);
      CHECK(chained.levels[d].last_sublayer == plain.levels[d].last_sublayer);
    }
    CHECK(chained.levels[0].first_sublayer == plain.levels[0].first_sublayer);
    CHECK(chained.levels[0].last_sublayer % 2 == 1);
    CHECK(chained.levels[0].last_sublayer >= 2 * plain.layers + 1);
    CHECK(chained.layers == chained.levels[0].last_sublayer / 2 + 1);
  }
  CHECK(several >= 3);
}

TEST_CASE("kr plan: the depth and each level's sublayers are those of the network") {
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    for (bool time_shifted : {true, false}) {
      CAPTURE(time_shifted);
      check_plan_against_network(a, 64, time_shifted);
    }
  }
  // Counting past plain float32's reach (T > 2048): in blocks (two layers more per counter),
  // whose combs are exact in any summation order. The dyadic heads count exactly in the one
  // layer a whole sum takes, but their comb reads counts up to (p - 1) T and is exact only
  // in unit order (issue 36: MKL's few-row sgemm gets it wrong at 16384), so they are built
  // only where forced.
  for (const char* name : {"cyclic_7", "quaternion", "full_transformations_3"}) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    check_plan_against_network(a, 4096, true);
    const CompileResult whole = compile_kr(a, 1024), blocks = compile_kr(a, 4096);
    CHECK(whole.kr->counter_sum == CounterSum::Whole);
    CHECK(blocks.kr->counter_sum == CounterSum::Blocks);
    CHECK(blocks.kr->counter_block == 64);
    CHECK(blocks.kr->layers == static_cast<int>(blocks.network.layers.size()));
    CompileOptions options;
    options.strategy = Strategy::Kr;
    options.max_len = 4096;
    options.kr.counter_sum = CounterSum::Dyadic;
    const CompileResult dyadic = compile(a, options);
    CHECK(dyadic.kr->counter_sum == CounterSum::Dyadic);
    CHECK(dyadic.kr->counter_block == 0);
    CHECK(dyadic.network.layers.size() == whole.network.layers.size());
    CHECK(blocks.network.layers.size() > dyadic.network.layers.size());
    options.kr.counter_sum = CounterSum::Whole;  // drifts in float32 past 2048: refused
    CHECK_THROWS_AS(compile(a, options), LimitError);
  }
  CHECK(compile_kr(test::reference_automaton("cyclic_7"), 1100).kr->counter_sum ==
        CounterSum::Blocks);
  CHECK(compile_kr(test::reference_automaton("flipflop_3"), 4096).kr->counter_sum ==
        CounterSum::Whole);  // no counter
  // (p - 1) T past 2^19, where the comb reading a whole count would round: blocks again.
  const KrPlan far = plan_kr(HolonomyDecomposition::compute(test::reference_automaton("cyclic_3")),
                             1 << 18, KrOptions{});
  CHECK(far.counter_sum == CounterSum::Blocks);
  CHECK(far.counter_block == 512);
  std::mt19937_64 rng(31);
  for (int i = 0; i < test::scaled(150); ++i) {
    const Automaton a = test::random_automaton(rng, 7, 3);
    CAPTURE(automaton_to_json(a).dump());
    check_plan_against_network(a, 32, true);
  }
}

TEST_CASE("kr plan: modes follow the holonomy groups") {
  for (const auto& name : test::reference_automaton_names()) {
    CAPTURE(name);
    const Automaton a = test::reference_automaton(name);
    const HolonomyDecomposition dec = HolonomyDecomposition::compute(a);
    const KrPlan plan = plan_kr(dec, 64, KrOptions{});
    REQUIRE(plan.levels.size() == static_cast<std::size_t>(dec.level_count()));
    for (int d = 0; d < dec.level_count(); ++d) {
      const KrLevelPlan& level = plan.levels[d];
      CAPTURE(level.level);
      bool solvable = true, trivial = true;
      for (const auto& slot : dec.level(d).slots) {
        solvable = solvable && slot.group.solvable;
        trivial = trivial && slot.group.order == 1;
      }
      // A non-solvable group has no counters; a trivial one needs none.
      if (!solvable) CHECK(level.mode == LevelMode::Scan);
      if (trivial) CHECK((level.mode == LevelMode::Memory || level.mode == LevelMode::Constant));
      if (level.mode == LevelMode::Memory) CHECK(level.resets);
      CHECK(level.values == dec.level(d).width);
      REQUIRE(level.components.size() == dec.level(d).slots.size());
      for (std::size_t s = 0; s < level.components.size(); ++s) {
        // The counters' moduli multiply to the order of the group the letters generate, a
        // subgroup of the holonomy group.
        long long product = 1;
        for (int p : level.components[s].counters) product *= p;
        CHECK(dec.level(d).slots[s].group.order % product == 0);
      }
    }
    // Every level has its line in the printed plan.
    const std::string text = plan_text(plan);
    CHECK(std::count(text.begin(), text.end(), '\n') == dec.level_count());
  }
}

namespace {
// The width of the prefix element a program's level `level` scan holds (-1: none).
int scan_prefix_width(const Program& program, int level) {
  for (const auto& s : program.layout().subspaces())
    if (s.role.kind == RoleKind::ScanPrefix && s.role.level == level) return s.width;
  return -1;
}
}  // namespace

TEST_CASE("kr plan: a scan level is built from the prefix scan the plan chose") {
  // The builder takes the form (and the element form's monoid) from the cascade rather than
  // choosing again: a planned choice changed before building is the one the network holds.
  int levels = 0, changed = 0;
  for (const auto& name : test::reference_automaton_names()) {
    const HolonomyDecomposition dec =
        HolonomyDecomposition::compute(test::reference_automaton(name));
    KrCascade cascade = decide_cascade(dec, 64, KrOptions{});
    bool any = false;
    for (int d = 0; d < dec.level_count(); ++d) {
      CAPTURE(name);
      const bool scan = cascade.plan.levels[d].mode == LevelMode::Scan;
      REQUIRE(cascade.scans[d].has_value() == scan);
      any = any || scan;
    }
    if (!any) continue;
    const Program original = build_kr(cascade);
    for (int d = 0; d < dec.level_count(); ++d) {
      CAPTURE(name);
      CAPTURE(d);
      if (!cascade.scans[d]) continue;
      ++levels;
      const ScanPlan& plan = cascade.plan.levels[d].scan;
      CHECK(cascade.scans[d]->choice.plan.form == plan.form);
      const int n = plan.set_size;
      CHECK(n == dec.level(d).width);
      const int width = plan.form == ScanForm::ElementOneHot    ? static_cast<int>(plan.monoid_size)
                        : plan.form == ScanForm::StateMapOneHot ? n * n
                                                                : n;
      CHECK(scan_prefix_width(original, d + 1) == width);
    }
    // Every scan level planned in another form is switched to state maps: n blocks of n.
    for (int d = 0; d < dec.level_count(); ++d) {
      if (!cascade.scans[d] || cascade.scans[d]->choice.plan.form == ScanForm::StateMapOneHot)
        continue;
      cascade.scans[d]->choice.plan.form = ScanForm::StateMapOneHot;
      cascade.scans[d]->choice.monoid.reset();
      ++changed;
    }
    const Program program = build_kr(cascade);
    for (int d = 0; d < dec.level_count(); ++d)
      if (cascade.scans[d])
        CHECK(scan_prefix_width(program, d + 1) ==
              cascade.plan.levels[d].scan.set_size * cascade.plan.levels[d].scan.set_size);
  }
  CHECK(levels > 0);
  CHECK(changed > 0);
}
