#pragma once
// Graphviz DOT descriptions in the dialect AALpy (save_automaton_to_file) and
// LearnLib/AutomataLib (GraphDOT) write:
//   digraph g {
//     s0 [shape="circle" label="0"];          // a state; shape=doublecircle: accepting
//     s0 -> s1 [label="a"];                   // a transition; Mealy "a / x" or "a/x": input a
//     __start0 [label="" shape="none"];
//     __start0 -> s0;                          // the initial state (any node named __start*)
//   }
//     s1 -> s0 [label=<a | b<br />x>];          // HTML (AALpy's TLS models): inputs a and b
// Parsed by Boost.Graph's read_graphviz after a grammar check that names the line of a syntax
// error and bounds brace nesting at 100. States are named by their labels when those are all
// present and distinct, else by their node ids, and listed in order of first appearance;
// letters in order of first appearance. No start marker: options.initial names the initial
// state; several make an NFA from all of them, as an edge without a label (an epsilon move)
// does. MONA's bit vectors ("X0X") and Spot's or LTLf2DFA's guards ("a & !b", "~a") read as
// every valuation they stand for (dot_guards.hpp); peripheries=2 (Spot) accepts, as
// doublecircle does. Probabilistic files (AALpy MDPs "d:0.9", Markov chains) are refused.
// Errors name the line.
#include <string>

#include "krc/automata/automaton.hpp"
#include "krc/automata/automaton_builder.hpp"

namespace krc {

Automaton read_dot_automaton(const std::string& text, const std::string& file,
                             const std::string& name, const CompletionOptions& options = {});

}  // namespace krc
