"""krc.load_automaton, krc.zoo, krc.Automaton and krc.decompose against independent oracles:
the JSON files read by Python's json module, and SgpDec's published decompositions."""

import json
import os

import pytest

import krc
from conftest import REFERENCE, Oracle, ZOO

REPO_DATA = os.path.join(os.path.dirname(REFERENCE), "frontend", "data")


@pytest.mark.parametrize("name", ["gridworld_9", "dihedral_4", "abab", "parity"])
def test_load_automaton_reads_what_the_file_says(name):
    path = os.path.join(ZOO, name + ".json")
    oracle = Oracle.of_json(path)
    a = krc.load_automaton(path)
    assert isinstance(a, krc.Automaton)
    assert a.states == oracle.states and a.letters == oracle.letters
    assert a.initial == oracle.states[oracle.initial]
    for i, letter in enumerate(oracle.letters):
        assert a.transitions[i] == oracle.delta[letter]
        for q, state in enumerate(oracle.states):
            assert a.step(state, letter) == oracle.states[oracle.delta[letter][q]]


def test_run_is_the_automaton_s_run():
    path = os.path.join(ZOO, "dihedral_4.json")
    oracle, a = Oracle.of_json(path), krc.load_automaton(path)
    word = [oracle.letters[(7 * i + i // 3) % len(oracle.letters)] for i in range(40)]
    assert a.run(word) == oracle.run(word)
    assert len(a.run([])) == 1


def test_zoo_is_its_reference_file():
    # The zoo's contract (automata/README.md): identical to tests/reference/automata/<name>.json.
    for name, kwargs in [("gridworld_9", {}), ("gridworld", {"n": 9}), ("parity", {})]:
        z = krc.zoo(name, **kwargs)
        ref = krc.load_automaton(os.path.join(REFERENCE, "automata", z.name + ".json"))
        assert z == ref
    assert krc.zoo("gridworld", n=9).name == "gridworld_9"
    families = {f.name: f for f in krc.zoo_families()}
    assert "gridworld" in families and families["gridworld"].has_parameter
    with pytest.raises(krc.InputError) as e:
        krc.zoo("no_such_family")
    assert e.value.file == "zoo"
    with pytest.raises(TypeError):
        krc.zoo("gridworld", size=3)


def test_automaton_built_in_python_round_trips_through_json(tmp_path):
    a = krc.Automaton("mod3", ["0", "1", "2"], ["inc", "stay"], [[1, 2, 0], [0, 1, 2]], "0")
    assert a.run(["inc", "inc", "stay", "inc"]) == ["0", "1", "2", "2", "0"]
    path = tmp_path / "mod3.json"
    path.write_text(a.to_json())
    assert krc.load_automaton(path) == a
    assert json.loads(a.to_json())["initial"] == "0"
    with pytest.raises(ValueError):
        krc.Automaton("bad", ["0"], ["a"], [[5]], "0")  # a target out of range


def test_parse_automaton_reads_text_as_load_automaton_reads_files():
    for name in ("mod3.dot", "mod3.jff", "mod3.json"):
        path = os.path.join(REPO_DATA, name)
        text = open(path).read()
        # The format from the name given, or from the content when the name does not say.
        assert krc.parse_automaton(text, file=name) == krc.load_automaton(path)
        assert krc.parse_automaton(text).states == krc.load_automaton(path).states
    with pytest.raises(krc.InputError) as e:
        krc.parse_automaton("digraph {", file="broken.dot")
    assert e.value.file == "broken.dot"


def test_input_format_complete_and_initial_options(tmp_path):
    dot = os.path.join(REPO_DATA, "ssh_no_start.dot")
    # No start marker: the initial state is named, as --initial does.
    a = krc.load_automaton(dot, initial="s1")
    assert a.initial == "s1"
    # A partial DFA: refused, or completed with a sink state.
    partial = tmp_path / "partial.txt"
    partial.write_text('{"states": ["p", "q"], "alphabet": ["a"], "initial": "p",'
                       ' "transitions": {"a": ["q", null]}}')
    with pytest.raises(krc.InputError):
        krc.load_automaton(partial, input_format="json")
    completed = krc.load_automaton(partial, input_format="json", complete=True)
    assert len(completed.states) == 3
    assert completed.run(["a", "a", "a"])[-1] == completed.run(["a", "a"])[-1]  # the sink stays
    with pytest.raises(ValueError):
        krc.load_automaton(partial, input_format="yaml")


def test_the_new_input_formats_by_keyword_extension_and_content():
    # RABIT, GOAL, AutomataLib TAF, FSM, mata, LTSmin ETF and Stamina ADL files (tests/frontend/data, with
    # SOURCES.md):
    # each read by name (the keyword shares the CLI's table), by extension and by content.
    cases = [("ba", "ba/rabit_fold.ba", ["a", "a"]),
             ("gff", "gff/goal_react_quickly_c0.gff", ["g0&!r0&!w0&w1"]),
             ("taf", "taf/automatalib_dfa.taf", ["a", "b", "c"]),
             ("fsm", "fsm/mcrl2_fan.fsm", ["increase", "on"]),
             ("vtf", "vtf/mata_nfa_anbn_n2.mata", ["0", "1"]),
             ("etf", "etf/ltsmin_manpage_example.etf", ["a", "b"]),
             # Stamina's reference file: 0 -hello-> identified_state -w-> 2 -o-> 3 (accepting)
             ("adl", "adl/stamina_ref_automaton.adl", ["hello", "w", "o"])]
    for fmt, name, word in cases:
        path = os.path.join(REPO_DATA, name)
        with open(path) as f:
            text = f.read()
        for a in (krc.load_automaton(path), krc.parse_automaton(text, input_format=fmt),
                  krc.parse_automaton(text, file="noext")):
            assert a.run(word)[-1] in a.accepting, (fmt, word)  # accepted, by hand (SOURCES.md)
    with pytest.raises(ValueError, match="ba, gff, taf, fsm, vtf, etf and adl"):
        krc.parse_automaton("x", input_format="rabit")
    with pytest.raises(krc.InputError) as e:
        krc.parse_automaton("[0]\na,[0]->\n", file="bad.ba")
    assert (e.value.file, e.value.place) == ("bad.ba", "line 2")
    # The etf(5) man page draws 00 -a-> 01 -b-> 11 and 00 -b-> 10 -a-> 11: no "a a".
    with open(os.path.join(REPO_DATA, "etf/ltsmin_manpage_example.etf")) as f:
        etf = krc.parse_automaton(f.read(), file="m.etf")
    assert etf.run(["a", "a"])[-1] not in etf.accepting
    assert etf.run(["b", "a"])[-1] in etf.accepting
    with pytest.raises(krc.InputError) as e:
        krc.parse_automaton("begin state\nx:s\nend state\nbegin edge\nend edge\nbegin init\n",
                            file="cut.etf")
    assert (e.value.file, e.value.place) == ("cut.etf", "line 6")
    # etf_label names the edge label whose values are the letters (--etf-label): here the
    # numbers of 'prio' instead of the values of the action label 'act'; a name the file does not
    # declare is an InputError that lists the ones it does.
    two = ("begin state\nx:s\nend state\nbegin edge\nprio:int act:action_sort\nend edge\n"
           "begin init\n0\nend init\nbegin trans\n0/1 7 \"go\"\n1/2 9 \"stop\"\nend trans\n"
           "begin sort s\n\"idle\"\n\"busy\"\n\"done\"\nend sort\n")
    assert krc.parse_automaton(two, file="two.etf").letters == ["go", "stop"]
    assert krc.parse_automaton(two, file="two.etf", etf_label="prio").letters == ["7", "9"]
    with pytest.raises(krc.InputError) as e:
        krc.parse_automaton(two, file="two.etf", etf_label="action")
    assert (e.value.file, e.value.place) == ("two.etf", "line 4")
    assert "'prio', 'act'" in str(e.value)
    with pytest.raises(ValueError, match="etf_label"):
        krc.parse_automaton(two, file="two.etf", etf_label="")


@pytest.mark.parametrize("name", ["abab", "dihedral_4", "flipflop_3", "symmetric_4",
                                  "full_transformations_4", "gridworld_4"])
def test_decompose_matches_sgpdec(name):
    with open(os.path.join(REFERENCE, "sgpdec_holonomy.json")) as f:
        expected = json.load(f)[name]
    d = krc.decompose(krc.zoo(name))
    assert len(d.levels) == expected["levels"]
    assert d.skeleton.image_count == expected["images"]
    got = sorted((lv.level, c.group.name, c.group.order, len(c.tiles), sorted(c.group.factors))
                 for lv in d.levels for c in lv.components)
    want = sorted((c["level"], c["name"], c["order"], c["tiles"], sorted(c["factors"]))
                  for c in expected["components"])
    assert got == want
    assert "semigroup size: %d" % expected["semigroup_size"] in d.text()


def test_decomposition_coordinates_emulate_the_automaton():
    # The cascade's defining property: decode(apply(encode(q), a)) is q's successor.
    a = krc.zoo("full_transformations", n=3)
    d = krc.decompose(a)
    for q in a.states:
        for letter in a.letters:
            assert d.decode(d.apply(d.encode(q), letter)) == a.step(q, letter)
    assert d.has_tables and d.reachable
    assert "level" in d.text() or str(d)
    assert krc.decompose(a, tables=False).has_tables is False


def test_decompose_limit_names_its_keyword():
    with pytest.raises(krc.LimitError) as e:
        krc.decompose(krc.zoo("full_transformations", n=5), max_images=3)
    assert e.value.option == "max_images"
    assert "max_images" in str(e.value)


def test_a_partial_mealy_file_reads_as_on_the_command_line():
    # AutomataLib's serialization example (tests/reference/realworld): 0 -a/1-> 1 -b/2-> 2
    # -c/3-> 0 and nothing else. Read by Python's door, compiled: the file's outputs while its
    # transitions are defined, "(undefined)" from the first missing one on.
    path = os.path.join(REFERENCE, "realworld", "files", "automatalib__serialization_mealy.dot")
    with pytest.warns(krc.ReadingNote, match=r"partial Mealy machine: its 6 missing transitions"):
        automaton = krc.load_automaton(path)
    net = krc.compile(automaton, max_len=8, strategy="scan")
    answer = lambda word: [s.split("#")[0] for s in net.run(word).states][1:]  # noqa: E731
    assert answer(["a", "b", "c", "a", "c"]) == ["1", "2", "3", "1", "(undefined)"]
    assert answer(["b", "a"]) == ["(undefined)", "(undefined)"]
    assert answer(["a", "b", "c", "a", "b", "c"]) == ["1", "2", "3", "1", "2", "3"]
