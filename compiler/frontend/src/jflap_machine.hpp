#pragma once
// Internal header. The two JFLAP layouts, read into one record that jflap_reader.cpp turns
// into an automaton:
//   JFLAP 4-7:  <structure><type>fa</type>[<automaton>]   (or mealy, moore)
//                 <state id="0" name="q0"><initial/><final/></state>
//                 <transition><from>0</from><to>1</to><read>a</read></transition>
//               A mealy transition adds <transout>x</transout>, its output; a moore state
//               <output>x</output> (JFLAP's MealyTransducer and MooreTransducer write them).
//   JFLAP 8:    <structure type="editor_panel"><structure type="transition_graph">
//                 <structure type="fsa">            (or a root type="mealy_machine")
//                   <structure type="state_set"><state><name>q0</name><id>0</id></state>...
//                   <structure type="start_state"><state>...<id>0</id></state>
//                   <structure type="final_states"><state>...</state>
//                   <structure type="transition_set">
//                     <fsa_trans><from>..<id>0</id></from><to>..</to><input>a</input></fsa_trans>
// Places are lines, found by counting start tags in the text (PropertyTree keeps document
// order but no positions).
#include <boost/property_tree/ptree.hpp>
#include <string>
#include <vector>

#include "krc/automata/automaton_builder.hpp"

namespace krc::frontend {

struct JflapState {
  std::string id, name;
  bool initial = false, final = false;
  std::string output;  // a moore file's <output>
  std::string place;
};

struct JflapTransition {
  std::string from, to, read;  // state ids and the letter ("" = epsilon)
  std::string output;          // a mealy file's <transout>
  std::string place;
};

struct JflapMachine {
  enum class Outputs { None, Mealy, Moore } outputs = Outputs::None;
  std::vector<JflapState> states;
  std::vector<JflapTransition> transitions;
};

// The lines of the start tags <tag ...> at or after byte `from`, in document order, skipping
// comments, processing instructions and CDATA.
std::vector<std::size_t> start_tag_lines(const std::string& text, const std::string& tag,
                                         std::size_t from = 0);

// `structure` is the root <structure> element; errors go through `b`.
JflapMachine jflap7_machine(const boost::property_tree::ptree& structure, const std::string& text,
                            const AutomatonBuilder& b);
JflapMachine jflap8_machine(const boost::property_tree::ptree& structure, const std::string& text,
                            const AutomatonBuilder& b);

}  // namespace krc::frontend
