"""krc.from_aalpy, krc.from_automata_lib and krc.from_pyformlang (issue 34, item 6) against the
packages' own semantics: each object is compiled into a network, and at every prefix of random
words the network's answer (Network.run, its argmax state named by its output) equals what the
package answers for that prefix: AALpy's model.execute_sequence (a Dfa's acceptance, a Moore
machine's state output, a Mealy machine's transition output), automata-lib's accepts_input,
pyformlang's accepts. The objects: AALpy's own Angluin DFA, random Moore and Mealy machines of
AALpy's generator, a DFA and a Mealy machine AALpy learns with L* from small systems, partial
automata, NFAs with epsilon moves and several start states. Then the hostile objects: too large
for the memory budget, letters that print alike, state names that clash or raise, the refused
model types, a missing package."""

import os
import random
import re
import sys
import warnings

import pytest

import krc

aalpy = pytest.importorskip("aalpy")
pytest.importorskip("automata.fa.dfa")
pytest.importorskip("pyformlang.finite_automaton")

from aalpy.automata import Dfa, DfaState, MealyMachine, MealyState, MooreMachine  # noqa: E402
from aalpy.utils import (generate_random_mealy_machine, generate_random_moore_machine,  # noqa
                         get_Angluin_dfa, get_ONFSM)
from automata.fa.dfa import DFA  # noqa: E402
from automata.fa.nfa import NFA  # noqa: E402
from pyformlang.finite_automaton import (DeterministicFiniteAutomaton, Epsilon,  # noqa: E402
                                         EpsilonNFA, NondeterministicFiniteAutomaton, State,
                                         Symbol)

MAX_LEN = 12


def network_outputs(automaton, word_names):
    """What the compiled network answers after every prefix (position 0: the empty word): its
    state's name without krc's '#2' suffix, which tells apart states of one output. The scan
    strategy: what is tested is the reading of the object, and scan compiles any automaton in
    milliseconds (auto also tries kr, seconds on the TCP client)."""
    net = krc.compile(automaton, max_len=MAX_LEN, strategy="scan")
    return net, lambda word: [re.sub(r"#\d+$", "", s)
                              for s in net.run([word_names[x] for x in word]).states]


def random_words(alphabet, rng, count=60):
    return [[rng.choice(alphabet) for _ in range(rng.randint(0, MAX_LEN))] for _ in range(count)]


def acceptance(accepted):
    return "accept" if accepted else "reject"


def check_aalpy(model, rng, answer_at_zero):
    """The network against model.execute_sequence at every prefix of random words."""
    automaton = krc.from_aalpy(model)
    alphabet = model.get_input_alphabet()
    net, run = network_outputs(automaton, {a: str(a) for a in alphabet})
    for word in random_words(alphabet, rng):
        outputs = model.execute_sequence(model.initial_state, word) if word else []
        if isinstance(model, Dfa):
            outputs = [acceptance(o) for o in outputs]
        expected = [answer_at_zero] + [str(o) for o in outputs]
        assert run(word) == expected, word
    return automaton, net


def test_aalpy_angluin_dfa_moore_and_mealy_answer_what_execute_sequence_answers():
    rng = random.Random(34)
    angluin = get_Angluin_dfa()
    automaton, net = check_aalpy(angluin, rng, acceptance(angluin.initial_state.is_accepting))
    assert sorted(automaton.letters) == ["a", "b"] and automaton.initial == "q0"
    assert net.verify(progress=False).ok
    moore = generate_random_moore_machine(6, ["x", "y", "z"], ["o1", "o2", "o3"])
    check_aalpy(moore, rng, str(moore.initial_state.output))
    mealy = generate_random_mealy_machine(7, ["a", "b", "c"], ["0", "1", "2"])
    automaton, net = check_aalpy(mealy, rng, "-")  # a Mealy network answers "-" before a letter
    assert net.verify(progress=False).ok


def test_aalpy_models_learned_by_lstar():
    # What a learner hands over: a DFA learned from a regular expression and a Mealy machine
    # learned from a random one, each with AALpy's L* in well under a second.
    from aalpy.learning_algs import run_Lstar
    from aalpy.oracles import RandomWordEqOracle
    from aalpy.SULs import MealySUL, RegexSUL

    rng = random.Random(7)
    random.seed(7)  # AALpy's equivalence oracles draw from the random module
    dfa = run_Lstar(["a", "b"], RegexSUL("(ab|b)*a"), RandomWordEqOracle(["a", "b"],
                    RegexSUL("(ab|b)*a"), num_walks=200), "dfa", print_level=0)
    check_aalpy(dfa, rng, acceptance(dfa.initial_state.is_accepting))
    target = generate_random_mealy_machine(5, ["i", "j"], ["u", "v"])
    sul = MealySUL(target)
    mealy = run_Lstar(["i", "j"], sul, RandomWordEqOracle(["i", "j"], sul, num_walks=300),
                      "mealy", print_level=0)
    check_aalpy(mealy, rng, "-")


@pytest.mark.parametrize("name, kind", [("aalpy__Angluin_Moore.dot", "moore"),
                                        ("aalpy__tomita_3.dot", "dfa"),
                                        ("aalpy__TCP_Linux_Client.dot", "mealy")])
def test_models_aalpy_reads_from_its_own_files(name, kind):
    # AALpy's model files (tests/reference/realworld, SOURCES.md there), read by AALpy's own
    # loader: the objects a user of AALpy holds.
    from aalpy.utils import load_automaton_from_file
    from conftest import REFERENCE

    model = load_automaton_from_file(os.path.join(REFERENCE, "realworld", "files", name), kind)
    start = {"moore": lambda m: str(m.initial_state.output), "mealy": lambda m: "-",
             "dfa": lambda m: acceptance(m.initial_state.is_accepting)}[kind]
    check_aalpy(model, random.Random(name), start(model))


def partial_aalpy_dfa():
    q0, q1 = DfaState("q0"), DfaState("q1", is_accepting=True)
    q0.transitions["a"] = q1
    q1.transitions["b"] = q0  # q0 has no "b", q1 no "a"
    return Dfa(q0, [q0, q1])


def test_a_partial_aalpy_dfa_is_completed_with_a_rejecting_sink_and_a_note():
    model = partial_aalpy_dfa()
    with pytest.warns(krc.ReadingNote, match=r"partial acceptor: its 2 missing transitions"):
        automaton = krc.from_aalpy(model)
    assert automaton.states == ["q0", "q1", "sink"]
    _, run = network_outputs(automaton, {"a": "a", "b": "b"})
    # AALpy raises KeyError on a missing transition: the word is rejected from there on.
    for word in random_words(["a", "b"], random.Random(3)):
        expected = [acceptance(False)]
        for t in range(1, len(word) + 1):
            try:
                expected.append(acceptance(model.execute_sequence(model.initial_state,
                                                                  word[:t])[-1]))
            except KeyError:
                expected += [acceptance(False)] * (len(word) - t + 1)
                break
        assert run(word) == expected, word


def test_a_partial_mealy_machine_outputs_undefined_where_aalpy_raises():
    s0, s1 = MealyState("s0"), MealyState("s1")
    s0.transitions["a"], s0.output_fun["a"] = s1, "x"
    s1.transitions["b"], s1.output_fun["b"] = s0, "y"
    s1.transitions["a"], s1.output_fun["a"] = s1, "z"
    model = MealyMachine(s0, [s0, s1])
    with pytest.warns(krc.ReadingNote, match=r"partial Mealy machine: its 1 missing transition "
                                             r"goes to a sink state 'sink'.*'\(undefined\)'"):
        automaton = krc.from_aalpy(model)
    assert automaton.step("s0", "b") == "sink"
    _, run = network_outputs(automaton, {"a": "a", "b": "b"})
    # AALpy's outputs while its transitions are defined; where it raises KeyError, and after,
    # the undefined output.
    for word in random_words(["a", "b"], random.Random(4)):
        expected = ["-"]
        for t in range(1, len(word) + 1):
            try:
                expected.append(str(model.execute_sequence(model.initial_state, word[:t])[-1]))
            except KeyError:
                expected += ["(undefined)"] * (len(word) - t + 1)
                break
        assert run(word) == expected, word
    with warnings.catch_warnings():
        warnings.simplefilter("error", krc.ReadingNote)  # asked for: the same, and no note
        assert krc.from_aalpy(model, complete=True).transitions == automaton.transitions


def test_a_partial_semiautomaton_file_still_asks_for_complete(tmp_path):
    path = tmp_path / "bare.json"
    path.write_text('{"states": ["a", "b"], "alphabet": ["x"], "initial": "a", '
                    '"transitions": {"x": ["b", null]}}')
    with pytest.raises(krc.InputError, match=r"state 'b' has no transition on letter 'x'.*"
                                             r"complete"):
        krc.load_automaton(path)
    assert krc.load_automaton(path, complete=True).step("b", "x") == "sink"


def test_automata_lib_dfa_partial_dfa_and_nfa_with_epsilon_moves():
    rng = random.Random(5)
    dfa = DFA(states={0, 1, 2}, input_symbols={"0", "1"},
              transitions={0: {"0": 0, "1": 1}, 1: {"0": 2, "1": 0}, 2: {"0": 1, "1": 2}},
              initial_state=0, final_states={0})  # binary numbers divisible by 3
    partial = DFA(states={"p", "q"}, input_symbols={"a", "b"},
                  transitions={"p": {"a": "q"}, "q": {"b": "p"}}, initial_state="p",
                  final_states={"q"}, allow_partial=True)
    nfa = NFA(states={"s", "t", "u"}, input_symbols={"a", "b"},
              transitions={"s": {"a": {"s", "t"}, "": {"u"}}, "t": {"b": {"u"}},
                           "u": {"a": {"t"}}},
              initial_state="s", final_states={"u"})
    for fa, notes in ((dfa, 0), (partial, 1), (nfa, 1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            automaton = krc.from_automata_lib(fa)
        assert len([w for w in caught if issubclass(w.category, krc.ReadingNote)]) == notes
        letters = sorted(fa.input_symbols)
        _, run = network_outputs(automaton, {a: a for a in letters})
        for word in random_words(letters, rng):
            assert run(word) == [acceptance(fa.accepts_input(word[:t]))
                                 for t in range(len(word) + 1)], word


def test_pyformlang_dfa_nfa_and_epsilon_nfa_with_several_start_states():
    rng = random.Random(11)
    dfa = DeterministicFiniteAutomaton()
    for a, b, c in ((0, "x", 1), (1, "x", 0), (1, "y", 1)):  # partial: 0 has no y
        dfa.add_transition(State(a), Symbol(b), State(c))
    dfa.add_start_state(State(0))
    dfa.add_final_state(State(1))
    nfa = NondeterministicFiniteAutomaton()
    for a, b, c in (("p", "x", "p"), ("p", "x", "q"), ("q", "y", "r"), ("r", "x", "r")):
        nfa.add_transition(State(a), Symbol(b), State(c))
    nfa.add_start_state(State("p"))
    nfa.add_final_state(State("r"))
    enfa = EpsilonNFA()
    for a, b, c in ((0, "x", 1), (1, Epsilon(), 2), (2, "y", 0), (3, "y", 3), (3, Epsilon(), 1)):
        enfa.add_transition(State(a), b if isinstance(b, Epsilon) else Symbol(b), State(c))
    enfa.add_start_state(State(0))
    enfa.add_start_state(State(3))
    enfa.add_final_state(State(2))
    for fa in (dfa, nfa, enfa):
        with pytest.warns(krc.ReadingNote):
            automaton = krc.from_pyformlang(fa)
        _, run = network_outputs(automaton, {"x": "x", "y": "y"})
        for word in random_words(["x", "y"], rng):
            assert run(word) == [acceptance(fa.accepts(word[:t]))
                                 for t in range(len(word) + 1)], word


def test_hostile_objects_are_refused_with_the_reason():
    # Too large for the memory budget: refused before anything is built.
    big = DFA(states=set(range(1000)), input_symbols={str(i) for i in range(20)},
              transitions={q: {str(i): (q + i) % 1000 for i in range(20)} for q in range(1000)},
              initial_state=0, final_states={0})
    old = krc._core.max_memory()
    krc.set_max_memory(2 << 20)
    try:
        with pytest.raises(krc.LimitError, match=r"1000 states and 20000 transitions") as e:
            krc.from_automata_lib(big)
        assert e.value.option == "max_memory"
    finally:
        krc.set_max_memory(old)
    # Two letters that print alike would be one token.
    s0 = DfaState("s0", is_accepting=True)
    s0.transitions[1] = s0
    s0.transitions["1"] = s0
    with pytest.raises(krc.InputError, match=r"two different letters are both named '1'"):
        krc.from_aalpy(Dfa(s0, [s0]))
    # Unhashable and clashing state ids: the states stay apart, named by position.
    a, b = DfaState(["x"], is_accepting=True), DfaState(["x"])
    a.transitions["t"], b.transitions["t"] = b, a
    with pytest.warns(krc.ReadingNote, match=r"named by their position"):
        automaton = krc.from_aalpy(Dfa(a, [a, b]))
    assert automaton.states == ["q0", "q1"] and automaton.accepting == ["q0"]
    assert automaton.run(["t", "t", "t"]) == ["q0", "q1", "q0", "q1"]

    class Hostile:
        def __str__(self):
            raise RuntimeError("no name")

        def __repr__(self):
            return "Hostile()"

    h = DfaState(Hostile(), is_accepting=True)
    h.transitions["a"] = h
    with pytest.raises(krc.InputError, match=r"str\(\) raises RuntimeError"):
        krc.from_aalpy(Dfa(h, [h]))
    # The reserved letter and the empty letter, as every reader refuses them.
    r = DfaState("r", is_accepting=True)
    r.transitions["<bos>"] = r
    with pytest.raises(krc.InputError, match=r"reserved"):
        krc.from_aalpy(Dfa(r, [r]))
    # A transition to a state the model does not list.
    u, v = DfaState("u"), DfaState("v", is_accepting=True)
    u.transitions["a"] = v
    with pytest.raises(krc.InputError, match=r"not among model.states"):
        krc.from_aalpy(Dfa(u, [u]))
    # A state listed twice in model.states is one state (a Moore output each, not two).
    moore = generate_random_moore_machine(3, ["x"], ["o1", "o2"])
    twice = MooreMachine(moore.initial_state, moore.states + [moore.states[0]])
    assert len(krc.from_aalpy(twice).states) == 3
    # No accepting state, partial: the empty language, still answered as acceptance.
    none = DfaState("none")
    none.transitions["a"] = none
    empty = Dfa(none, [none, DfaState("other")])
    empty.states[1].transitions["b"] = none
    assert set(krc.compile(krc.from_aalpy(empty), max_len=3, strategy="scan")
               .run(["a", "b", "a"]).states) == {"reject"}
    # An empty alphabet: only the empty word.
    lone = DfaState("lone", is_accepting=True)
    automaton = krc.from_aalpy(Dfa(lone, [lone]))
    assert automaton.letters == [] and automaton.accepting == ["lone"]
    # What krc does not compile, with the reason; what is no model at all, TypeError.
    with pytest.raises(krc.InputError, match=r"Onfsm is a nondeterministic Mealy machine"):
        krc.from_aalpy(get_ONFSM())
    with pytest.raises(TypeError, match=r"model must be AALpy's Dfa"):
        krc.from_aalpy("not a model")
    with pytest.raises(TypeError, match=r"automata-lib's DFA or NFA"):
        krc.from_automata_lib(get_Angluin_dfa())


def test_a_missing_package_names_the_learners_extra(monkeypatch):
    for module, function in (("aalpy", krc.from_aalpy),
                             ("automata.fa.dfa", krc.from_automata_lib),
                             ("pyformlang.finite_automaton", krc.from_pyformlang)):
        monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
        with pytest.raises(krc.MissingExtraError, match=r"pip install 'krc\[learners\]'"):
            function(object())
        monkeypatch.undo()


def test_load_automaton_says_what_the_command_line_notes_say(tmp_path):
    # A partial acceptor from a file: completed as before, and now said (krc.ReadingNote), as
    # `krc compile` says it in a `krc: note:` line.
    path = tmp_path / "partial.dot"
    path.write_text('digraph g { __start0 -> s0; s0 [shape=circle]; s1 [shape=doublecircle];\n'
                    's0 -> s1 [label="a"]; s1 -> s0 [label="b"]; }\n')
    with pytest.warns(krc.ReadingNote, match=r"partial acceptor: its 2 missing transitions go "
                                             r"to a rejecting sink state 'sink'"):
        automaton = krc.load_automaton(path)
    assert automaton.step("s0", "b") == "sink" and "sink" not in automaton.accepting
    with warnings.catch_warnings():
        warnings.simplefilter("error", krc.ReadingNote)
        with pytest.raises(krc.ReadingNote):
            krc.parse_automaton(path.read_text(), "partial.dot")
        krc.load_automaton(path, complete=True)  # asked for: no note, as on the command line
