"""The hostile inputs of the C++ tests (tests/tools/hostile_*_test.cpp,
tests/frontend/hostile_input_test.cpp), through Python: each is a krc.InputError or
krc.LimitError with the message the krc command prints, never a crash of the interpreter."""

import os
import struct
import subprocess
import sys

import pytest

import krc


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def test_dev_zero_stops_at_the_first_nul_byte():
    for fmt in (None, "json", "dot"):
        with pytest.raises(krc.InputError) as e:
            krc.load_automaton("/dev/zero", input_format=fmt)
        assert (e.value.file, e.value.place) == ("/dev/zero", "line 1")
        assert e.value.problem.startswith("a NUL byte (at byte 0)")
        assert str(e.value).startswith("/dev/zero: line 1: a NUL byte (at byte 0)")


def test_a_huge_file_is_refused_by_its_size(tmp_path):
    path = write(tmp_path, "huge.json", "{")
    os.truncate(path, 20 << 30)  # sparse: no disk used
    with pytest.raises(krc.LimitError) as e:
        krc.load_automaton(path)
    assert "20.0 GiB, more than the" in str(e.value) and path in str(e.value)
    assert e.value.option == "max_memory"


def test_json_nested_100000_deep_is_refused_at_its_line_and_column(tmp_path):
    prefix = ('{"states": ["a"], "alphabet": ["x"], "initial": "a",\n'
              ' "transitions": {"x": ["a"]}, "notes": ')
    path = write(tmp_path, "deep.json", prefix + "[" * 100000 + "]" * 100000 + "}\n")
    column = len(prefix) - prefix.index("\n") - 1 + 511 + 1
    with pytest.raises(krc.InputError) as e:
        krc.load_automaton(path)
    assert e.value.place == "line 2, column %d" % column
    assert e.value.problem.startswith("JSON nested deeper than 512 levels")


@pytest.mark.parametrize("opening", ["{", "subgraph {", "subgraph s {"])
def test_dot_nested_20000_deep_stops_at_the_nesting_limit(tmp_path, opening):
    # Line k opens depth k, as tests/frontend/hostile_input_test.cpp writes it.
    depth = 20000
    text = ("digraph g {\n" + (opening + "\n") * (depth - 1) + 's0 -> s0 [label="a"];\n'
            + "}\n" * (depth - 1) + "__start0 -> s0;\n}\n")
    path = write(tmp_path, "deep.dot", text)
    with pytest.raises(krc.InputError) as e:
        krc.load_automaton(path)
    assert e.value.place == "line 101"
    assert "nested more than 100 deep" in e.value.problem


def test_the_letter_bos_is_refused_where_it_is_written(tmp_path):
    cases = [
        ("bos.json", '{"states": ["p"], "alphabet": ["a", "<bos>"], "initial": "p",\n'
                     ' "transitions": {"a": ["p"], "<bos>": ["p"]}}', "/alphabet/1"),
        ("bos.dot", 'digraph g {\n  s0 [label="0"];\n  s0 -> s0 [label="a"];\n'
                    '  s0 -> s0 [label="<bos>"];\n  __start0 -> s0;\n}\n', "line 4"),
        ("bos.jff", '<structure><type>fa</type><automaton>\n'
                    '<state id="0" name="q0"><initial/></state>\n'
                    '<transition><from>0</from><to>0</to><read>&lt;bos&gt;</read></transition>\n'
                    '</automaton></structure>\n', "line 3"),
    ]
    for name, text, place in cases:
        path = write(tmp_path, name, text)
        with pytest.raises(krc.InputError) as e:
            krc.load_automaton(path)
        assert (e.value.file, e.value.place) == (path, place)
        assert e.value.problem.startswith("the letter name '<bos>' is reserved")


def test_forged_weights_headers_are_refused_by_their_numbers(tmp_path):
    for length, problem in [(100_000_001, "larger than krc's limit of 100000000"),
                            (1 << 40, "larger than krc's limit"),
                            (99_000_000, "larger than the rest of the file")]:
        path = write(tmp_path, "forged.safetensors", struct.pack("<Q", length) + b"{}")
        with pytest.raises(krc.InputError) as e:
            krc.load(path)
        assert e.value.file == path and e.value.place == "header"
        assert "header length %d" % length in e.value.problem and problem in e.value.problem
    sparse = write(tmp_path, "sparse.safetensors", b"\x07\0\0\0\0\0\0\0{\"a\":1}")
    os.truncate(sparse, 20 << 30)
    with pytest.raises(krc.InputError) as e:
        krc.load(sparse)
    assert str(e.value).startswith(sparse + ": tensor 'a': must be an object")


def test_truncated_and_foreign_files_are_input_errors(tmp_path):
    net = krc.compile(krc.zoo("parity"), max_len=8)
    good = tmp_path / "parity.safetensors"
    net.save(good)
    data = good.read_bytes()
    for cut in (0, 7, 8, 100, len(data) // 2, len(data) - 1):
        path = write(tmp_path, "cut.safetensors", data[:cut])
        with pytest.raises(krc.InputError) as e:
            krc.load(path)
        assert e.value.file == path and e.value.problem
    # A description is not a weights file, and the other way round.
    with pytest.raises(krc.InputError):
        krc.load(os.path.join(os.path.dirname(__file__), "..", "..", "automata", "zoo",
                              "parity.json"))
    with pytest.raises(krc.InputError):
        krc.load_automaton(good)
    with pytest.raises(krc.InputError):
        krc.load(tmp_path / "missing.safetensors")


def test_words_outside_the_alphabet_or_too_long():
    net = krc.compile(krc.zoo("parity"), max_len=8)
    with pytest.raises(krc.InputError) as e:
        net.run(["0", "2"])
    assert e.value.file == "word" and e.value.place == 'letter "2"'
    with pytest.raises(krc.InputError) as e:
        net.run("0" * 9)
    assert "more than the network's max_len 8" in e.value.problem


def test_onelayer_beyond_its_limits_is_a_limit_error():
    with pytest.raises(krc.LimitError) as e:
        krc.compile(krc.zoo("dihedral", n=4), strategy="onelayer", max_len=4096)
    assert "max_len" in str(e.value) or "max-len" in str(e.value)


def test_the_memory_budget_stops_a_large_compilation(tmp_path):
    # tests/tools/hostile_descriptions_test.cpp's 2,000-state random automaton at max-len 64.
    import random
    rng = random.Random(9)
    n = 2000
    text = '{"states": [%s], "alphabet": ["a", "b"], "initial": 0, "transitions": ' \
           '{"a": [%s], "b": [%s]}}' % (
               ",".join('"q%d"' % i for i in range(n)),
               ",".join(str(rng.randrange(n)) for _ in range(n)),
               ",".join(str(rng.randrange(n)) for _ in range(n)))
    path = write(tmp_path, "random.json", text)
    previous = krc._core.max_memory()
    krc.set_max_memory(512 << 20)
    try:
        # kr: the integer scan now fits 2,000 states, so auto no longer stops at the budget.
        with pytest.raises(krc.LimitError) as e:
            krc.compile(krc.load_automaton(path), strategy="kr", max_len=64)
    finally:
        krc.set_max_memory(previous)
    # Spelt for Python (issue 33: Python messages name keywords, not flags).
    assert "memory budget (max_memory 512 MiB)" in str(e.value)
    assert "--" not in str(e.value)
    assert e.value.option == "max_memory"


def test_errors_never_crash_the_interpreter(tmp_path):
    # The same hostile inputs in a child interpreter: it must end by its own exit, not a signal.
    code = ("import krc\n"
            "for f in ['/dev/zero', %r]:\n"
            "    try: krc.load_automaton(f)\n"
            "    except krc.KrcError: pass\n"
            "try: krc.load('/dev/zero')\n"
            "except krc.KrcError: pass\n"
            "print('survived')\n") % write(tmp_path, "x.json", "{\"states\": [")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "survived"
