#pragma once
// GOAL's GFF (the Graphical Tool for Omega-Automata and Logics, goal.im.ntu.edu.tw): XML with
// element names in either case, read for finite words:
//   <structure label-on="transition" type="fa">        (or type="FiniteStateAutomaton")
//     <alphabet type="propositional"><prop>g0</prop><prop>r0</prop></alphabet>
//     <stateSet><state sid="0"/> <state sid="1"/></stateSet>
//     <transitionSet><transition tid="0"><from>0</from><to>1</to><read>~g0 r0</read>
//     </transition></transitionSet>                     (<label> also names the label)
//     <initialStateSet><stateID>0</stateID></initialStateSet>
//     <acc type="buchi"><stateID>1</stateID></acc>
//   </structure>
// A propositional alphabet is read as HOA's is (hoa_reader.hpp): every valuation of the
// propositions is a letter ("g0&!r0", proposition 0 first; at most 12 propositions), and a
// label, a conjunction of literals "p" and "~p" separated by spaces or "True", is the set of
// valuations that satisfy it (one transition each, so overlapping labels make an NFA). A
// classical alphabet (<symbol>a</symbol>) has its symbols as letters. States are named by
// their sid. Several initial states make an NFA. Büchi acceptance is read as krc reads HOA's
// state-based Büchi acceptance: a finite word is accepted when a run ends in an accepting
// state (said by a note); other acceptance conditions (co-Büchi, parity, Rabin, Streett,
// Muller) and state-labelled automata are refused with the reason. Errors name the line.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_gff_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
