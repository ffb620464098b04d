#pragma once
// Strategy `onelayer`: one attention layer with a single rank-1 head that gives every prefix a
// number (a contextual mapping, Yun et al. 2020; Kajitsuka and Sato 2024), then feed-forward
// blocks that read the automaton's state off that number, built from its plan
// (krc/backend/plan.hpp). Words up to a bounded length only: the numbers get denser as words get
// longer.
#include "ir/program.hpp"
#include "krc/automata/automaton.hpp"
#include "krc/backend/plan.hpp"

namespace krc {

Program build_onelayer(const Automaton& automaton, const OneLayerPlan& plan);

}  // namespace krc
