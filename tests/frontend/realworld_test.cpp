// Every file of tests/reference/realworld/files (written by AALpy, AutomataLib, FlexFringe,
// JFLAP and benchmark collections; SOURCES.md there says where each comes from): the DFAs and
// Mealy machines read (the partial acceptors completed by default, the partial Mealy machines
// with --complete), and the first state listed initial where
// the file has no start marker; the NFAs are determinised (checked against the file's own
// transitions, read here line by line, as an NFA run on every short word); the others are
// refused with the reason. A DFA that reads must keep every transition it lists: the
// automaton's transitions (those into an added sink aside) are counted against the file's own
// transition statements, counted here line by line.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "frontend_test_helpers.hpp"

using namespace krc;
using test::contains;

namespace {

struct RealWorldFile {
  std::string name;
  bool complete = false;    // partial: --complete
  std::string initial;      // no start marker: the first state listed, this one
  std::size_t states = 0;   // as SOURCES.md lists them (after --complete); 0: not listed
  std::size_t letters = 0;  // as SOURCES.md lists them; 0: not listed
  std::string refused;      // non-empty: the file is refused with a message containing this
  bool nfa = false;         // nondeterministic: determinised (refused with --no-determinise)
  bool collected = false;   // collected for issue 23 (tests/tools compiles and verifies them)
  // Partial and an acceptor (accepting states, no Mealy or Moore outputs): completed with a
  // rejecting sink without --complete, and said in a note.
  bool acceptor = false;
};

RealWorldFile reads(std::string name, std::size_t states = 0, std::size_t letters = 0) {
  return {std::move(name), false, "", states, letters, ""};
}
RealWorldFile partial(std::string name, std::size_t states, std::size_t letters) {
  return {std::move(name), true, "", states, letters, ""};
}
// A partial DFA with accepting states and no outputs (its file says so: doublecircle states or
// JFLAP final states, and no 'in / out' labels).
RealWorldFile partial_acceptor(std::string name, std::size_t states, std::size_t letters) {
  RealWorldFile f = partial(std::move(name), states, letters);
  f.acceptor = true;
  return f;
}
RealWorldFile no_start(std::string name, std::string initial) {
  return {std::move(name), false, std::move(initial), 0, 0, ""};
}
RealWorldFile refused(std::string name, std::string reason) {
  return {std::move(name), false, "", 0, 0, std::move(reason)};
}
RealWorldFile nfa(std::string name) { return {std::move(name), false, "", 0, 0, "", true}; }
RealWorldFile collected(std::string name, std::size_t states, std::size_t letters) {
  return {std::move(name), false, "", states, letters, "", false, true};
}

const std::vector<RealWorldFile> kFiles{
    reads("aalpy_821f054__DFArandomChamparnaudParanthon_1000States_20Inputs_0.dot"),
    reads("aalpy__Angluin_Mealy.dot", 4, 2),
    reads("aalpy__Angluin_Moore.dot", 4, 2),
    reads("aalpy__BLE_CC2650.dot", 5, 9),
    reads("aalpy__BLE_CYW43455.dot", 16, 7),
    refused("aalpy__MDP_faulty_car_alarm.dot", "Markov decision process"),
    reads("aalpy__MQTT_VerneMQ__two_client_will_retain.dot", 17, 9),
    reads("aalpy__MQTT_mosquitto__two_client_will_retain.dot", 18, 9),
    reads("aalpy__TCP_Linux_Client.dot", 15, 10),
    reads("aalpy__TCP_tcp_server_bsd_trans.dot", 55, 13),
    reads("aalpy__TLS_JSSE_1.8.0_25_server_regular.dot"),
    reads("aalpy__TLS_OpenSSL_1.0.2_server_regular.dot", 7, 7),
    // AALpy's pushdown automaton ('( / push(()', ') / pop(()'): a stack, so no finite automaton.
    refused("aalpy__arithmetics.dot", "pushdown automaton"),
    reads("aalpy__car_alarm.dot", 6, 2),
    reads("aalpy__coffee_moore.dot", 3, 2),
    reads("aalpy__onfsm_0.dot", 2, 2),
    reads("aalpy__simple_abc_dfa.dot", 2, 3),
    reads("aalpy__simple_abc_mealy.dot", 1, 3),
    reads("aalpy__tomita_3.dot", 5, 2),
    reads("aalpy__tomita_5.dot", 4, 2),
    reads("aalpy__tomita_7.dot", 5, 2),
    collected("aalpy__tomita_2.dot", 4, 2),
    collected("aalpy__tomita_4.dot", 4, 2),
    collected("aalpy__tomita_6.dot", 3, 2),
    collected("aalpy__BLE_nRF52832.dot", 5, 9),
    collected("aalpy__BLE_cc2652r1.dot", 4, 7),
    collected("aalpy__BLE_CYBLE-416045-02.dot", 3, 9),
    partial("automatalib__incremental_mealy_dag.dot", 6, 3),
    partial_acceptor("automatalib__serialization_dfa.dot", 4, 3),
    partial("automatalib__serialization_mealy.dot", 4, 3),
    reads("automatalib__serialization_moore.dot", 3, 2),
    nfa("automatalib__serialization_nfa.dot"),
    partial_acceptor("automatalib__visualizer_dfa.dot", 4, 3),
    partial_acceptor("flexfringe__toy_dfa_0.dot", 5, 2),
    partial_acceptor("jflap8recon__ex1.1a.jff", 4, 0),
    nfa("jflap8recon__mealyTest.jff"),
    reads("jflapautograder__HW210207.jff", 7, 2),
    reads("jflapautograder__HW210215.jff", 31, 2),
    nfa("jflapautograder__example.jff"),
    // Every transition an epsilon one: determinised to one state and no letters, an automaton
    // that reads only the empty word (nfa_test.cpp; tests/tools compiles and verifies it).
    nfa("jflapcheck__test_fa.jff"),
    no_start("mealyverifier__opcua_open62541_v1.1.1.dot", "0"),
    no_start("mealyverifier__ssh_DropBear.dot", "s0"),
    no_start("mealyverifier__ssh_OpenSSH.dot", "s0"),
};

std::filesystem::path realworld_dir() { return test::reference_dir() / "realworld" / "files"; }

// Transition statements of a file, counted without a parser: DOT lines with an arrow that
// do not leave a start marker, an HTML label <a | b<br />...> counting one per input; JFLAP
// <transition> and <fsa_trans> elements.
std::size_t listed_transitions(const std::string& text, bool jflap) {
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  };
  if (jflap) return count("<transition>") + count("<fsa_trans>");
  std::size_t n = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.find("->") == std::string::npos || line.find("__start") != std::string::npos) continue;
    const std::size_t html = line.find("label=<");
    n += html == std::string::npos
             ? 1
             : 1 + static_cast<std::size_t>(std::count(
                       line.begin() + static_cast<std::ptrdiff_t>(html),
                       line.begin() + static_cast<std::ptrdiff_t>(line.find("<br", html)), '|'));
  }
  return n;
}

// Transitions of `a` that the file listed: all of them, less those of and into the sink that
// --complete added (the last state).
std::size_t kept_transitions(const Automaton& a, bool completed) {
  const StateId sink = static_cast<StateId>(a.state_count() - 1);
  std::size_t n = 0;
  for (StateId q = 0; q < a.state_count(); ++q)
    for (LetterId l = 0; l < a.letter_count(); ++l)
      if (!completed || (q != sink && a.step(q, l) != sink)) ++n;
  return n;
}

}  // namespace

TEST_CASE("realworld: the table covers every file") {
  std::set<std::string> listed, present;
  for (const auto& f : kFiles) listed.insert(f.name);
  for (const auto& entry : std::filesystem::directory_iterator(realworld_dir()))
    present.insert(entry.path().filename().string());
  CHECK(listed == present);
}

TEST_CASE("realworld: every DFA and Mealy machine reads and keeps every listed transition") {
  for (const auto& f : kFiles) {
    if (!f.refused.empty() || f.nfa) continue;
    CAPTURE(f.name);
    const auto path = realworld_dir() / f.name;
    LoadOptions options;
    options.completion.add_sink = f.complete;
    const Automaton a = load_automaton(path.string(), options);
    if (f.states) CHECK(a.state_count() == f.states);
    if (f.letters) CHECK(a.letter_count() == f.letters);
    const bool jflap = path.extension() == ".jff";
    CHECK(kept_transitions(a, f.complete) == listed_transitions(test::read_text(path), jflap));
    if (!f.initial.empty()) {
      // The first state listed, said as a note; --initial still overrides it.
      CHECK(a.state_name(a.initial()) == f.initial);
      std::vector<std::string> notes;
      options.completion.note = [&](const std::string& note) { notes.push_back(note); };
      options.completion.initial = a.state_name(a.state_count() - 1);
      CHECK(load_automaton(path.string(), options).initial() == a.state_count() - 1);
      CHECK(notes.empty());
      options.completion.initial.clear();
      load_automaton(path.string(), options);
      REQUIRE(notes.size() == 1);
      CHECK(contains(notes[0], "no start marker"));
      CHECK(contains(notes[0], "'" + f.initial + "'"));
    }
    // A partial acceptor or Mealy machine reads without --complete as with it, and a note
    // says so (its missing transitions reject, or output the undefined output).
    if (f.complete) {
      std::vector<std::string> notes;
      LoadOptions plain;
      plain.completion.note = [&](const std::string& note) { notes.push_back(note); };
      CHECK(load_automaton(path.string(), plain) == a);
      REQUIRE(notes.size() == 1);
      CHECK(contains(notes[0], f.acceptor ? "partial acceptor" : "partial Mealy machine"));
      CHECK(contains(notes[0], f.acceptor ? "rejecting sink state 'sink'" : "'(undefined)'"));
    }
  }
}

TEST_CASE("realworld: probabilistic files are refused and why") {
  for (const auto& f : kFiles) {
    if (f.refused.empty()) continue;
    CAPTURE(f.name);
    try {
      LoadOptions options;
      options.completion.add_sink = true;  // refused whatever the options
      load_automaton((realworld_dir() / f.name).string(), options);
      FAIL("read");
    } catch (const InputError& e) {
      CHECK(contains(e.problem(), f.refused));
      CHECK_FALSE(e.place().empty());  // and where
    }
  }
}
