#pragma once
// Reset automata (the state is a function of the last letter) and hand-made networks that
// compute them.
#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc::test {

// States "start" (initial), then one per letter image; letter i resets to state
// reset_target[i].
Automaton reset_automaton(const std::vector<std::string>& letters,
                          const std::vector<StateId>& reset_target, StateId states);

// Logit 1 for the state the token resets to (BOS: the initial state), 0 for the others,
// except: `wrong_letter` (if >= 0) points at state `wrong_state` instead, and the token of
// `weak_letter` (if >= 0) has weight `weak_weight` instead of 1.
struct ResetNetworkOptions {
  int max_len = 12;
  int wrong_letter = -1;
  StateId wrong_state = 0;
  int weak_letter = -1;
  float weak_weight = 0.5f;
};
Network reset_network(const Automaton& automaton, const ResetNetworkOptions& options = {});

// The automaton "last letter" (states start, a, b, c; letter x resets to x) and a one-layer
// network for it whose single select head has query zero, so that every score ties: hard
// attention, breaking ties towards the latest position, copies the current token, which is the
// state. With token_keys the key is the token one-hot (four groups of equal keys, all scoring
// 0); otherwise the key is zero.
Automaton last_letter_automaton();
Network last_letter_copy_network(int max_len, bool token_keys);

}  // namespace krc::test
