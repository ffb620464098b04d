// The onelayer network from its plan. Legend: L = max_len, z the contextual value, theta_b and
// gain_b the plan's thresholds (b = 0..B-1, ascending), y_b = ReLU(z - theta_b),
// s_b = ReLU(1 - gain_b y_b), sigma_r the state of run r (r = 0..B): run r lies between
// theta_(r-1) and theta_r.
//
// Why it is exact: onelayer_plan.cpp derives the float32 bound (steps 1-6); the weights here
// are the ones it assumes, each exact in float32:
//   embedding  the letter code (the plan's digit, or count weight < 2^24); the position j;
//              the constant 1; for Counts also ln(L + 1 - t) and the BOS flag (features.hpp).
//   head       positional codes: query +-lambda (a multiple of 1/256) on the constant, key 1 on
//              the position, so the score is +-lambda j; Counts: prefix_sum (query ln(L+1-t) on
//              the BOS key, output weight L + 1). One query row and one key row: W_Q W_K^T has
//              rank 1. Value 1 on the letter code, output 1 into z.
//   layer 0    y_b = ReLU(z - theta_b), one input and one output each, so nothing is rounded
//              but z - theta_b itself.
//   layer 1    s_b = ReLU(1 - gain_b y_b), gain_b a power of two: exactly 1 when z <= theta_b,
//              exactly 0 above. It writes +1 to sigma_b and -1 to sigma_(b+1); the unembedding
//              adds 1 to sigma_B from the constant. The logit of state q is then
//              sum over the runs r of q of (s_r - s_(r-1)), with s_(-1) = 0 and s_B = 1: 1 for
//              the run z falls in, 0 for every other state (small integers: exact).
#include "strategies/onelayer/onelayer_strategy.hpp"

#include <cstdio>

#include "primitives/attention_heads.hpp"
#include "primitives/features.hpp"

namespace krc {

namespace {

HeadOp contextual_head(Features& f, const OneLayerPlan& plan, const Subspace& code,
                       const Subspace& z) {
  const Role role{RoleKind::ContextualValue};
  if (plan.code == ContextCode::Counts)
    return prefix_sum(f, {{code[0], 1.0f}}, z[0],
                      "contextual mapping: letter counts (a constant-denominator sum)", role);
  const bool latest = plan.code == ContextCode::LatestFirst;
  char weight[64];
  std::snprintf(weight, sizeof weight, "e^(%s%.6g j)", latest ? "" : "-", double(plan.sharpness));
  HeadOp head;
  head.name = std::string("contextual mapping: letter digits weighted ") + weight + ", the " +
              (latest ? "latest" : "first") + " letter leading";
  head.role = role;
  head.kind = HeadKind::Average;  // a weighted mean by design, not a selection
  head.key_dim = 1;
  head.query.push_back({f.one()[0], 0, latest ? plan.sharpness : -plan.sharpness});
  head.key.push_back({f.position()[0], 0, 1.0f});
  head.value_dim = 1;
  head.value.push_back({code[0], 0, 1.0f});
  head.output.push_back({0, z[0], 1.0f});
  return head;
}

MlpOp threshold_units(const OneLayerPlan& plan, const Subspace& z, const Subspace& past) {
  MlpOp mlp;
  mlp.name = "decode: the value past each threshold";
  mlp.role = {RoleKind::ValueThreshold};
  for (std::size_t b = 0; b < plan.thresholds.size(); ++b)
    mlp.add_unit({{z[0], 1.0f}}, -plan.thresholds[b].value, {{past[static_cast<int>(b)], 1.0f}});
  return mlp;
}

MlpOp decode_units(const OneLayerPlan& plan, const Subspace& past, const Subspace& state) {
  MlpOp mlp;
  mlp.name = "decode: the state of the run the value falls in";
  mlp.role = {RoleKind::ValueDecode};
  for (std::size_t b = 0; b < plan.thresholds.size(); ++b)
    mlp.add_unit({{past[static_cast<int>(b)], -plan.thresholds[b].gain}}, 1.0f,
                 {{state[plan.run_states[b]], 1.0f}, {state[plan.run_states[b + 1]], -1.0f}});
  return mlp;
}

std::vector<std::string> threshold_labels(const OneLayerPlan& plan) {
  std::vector<std::string> labels;
  for (const auto& t : plan.thresholds) {
    char label[48];
    std::snprintf(label, sizeof label, "z>%.9g", double(t.value));
    labels.push_back(label);
  }
  return labels;
}

}  // namespace

Program build_onelayer(const Automaton& automaton, const OneLayerPlan& plan) {
  Program program(vocabulary_of(automaton), automaton.states(), plan.max_len);
  Features features(program);
  ResidualLayout& layout = program.layout();
  const Subspace code = layout.allocate_scalar("letter code", {RoleKind::LetterCode});
  for (LetterId a = 0; a < automaton.letter_count(); ++a)
    if (plan.letter_code.at(a) != 0)
      program.embed_token(static_cast<int>(a) + 1, code[0],
                          static_cast<float>(plan.letter_code[a]));
  const Subspace z = layout.allocate_scalar("contextual value", {RoleKind::ContextualValue});
  program.add(contextual_head(features, plan, code, z), "contextual mapping");
  if (!plan.thresholds.empty()) {
    const Subspace past =
        layout.allocate("value past threshold", threshold_labels(plan), {RoleKind::ValueThreshold});
    const Subspace state = layout.allocate("state", automaton.states(), {RoleKind::State});
    program.add(threshold_units(plan, z, past), "decode");
    program.add(decode_units(plan, past, state), "decode");
    for (int q = 0; q < state.width; ++q) program.unembed(state[q], q, 1.0f);
  }
  program.unembed(features.one()[0], plan.run_states.back(), 1.0f);
  return program;
}

}  // namespace krc
