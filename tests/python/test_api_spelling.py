"""One message, two spellings (issue 33): an error that names an option names the command
line's flag there (`--max-memory 1.00 MiB`) and Python's keyword in Python (`max_memory 1.00
MiB`), whichever entry point raises it (the readers, from_regex, decompose, compile, verify,
to_hf). Each case is provoked through both doors on the same file: the command's message keeps
its flag, the Python exception carries no `--flag` at all and names the keyword, and swapping
the case's own phrases turns the command's message into Python's, so the two are one message.
The oracle is the command line's text, and the phrases are written here from the options the
case sets, not taken from the code that respells them."""

import os
import random
import re
import subprocess

import pytest

import krc
from frameworks_support import krc_binary

# A flag as a message would spell it: two hyphens and a letter, not inside a word.
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def cli(*args):
    """The krc command's status and its last `krc: error:` line, without the prefix."""
    r = subprocess.run([krc_binary(), *map(str, args)], capture_output=True, text=True)
    errors = [l for l in r.stderr.splitlines() if l.startswith("krc: error: ")]
    return r.returncode, (errors[-1][len("krc: error: "):] if errors else r.stderr)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The inputs both doors read; the networks are the command's files."""
    d = tmp_path_factory.mktemp("spelling")
    f = {"dir": d}
    f["partial"] = d / "partial.json"
    f["partial"].write_text('{"states": ["s", "t"], "alphabet": ["a", "b"], "initial": "s", '
                            '"accepting": ["t"], "transitions": {"a": ["t", null], '
                            '"b": ["s", "t"]}}')
    f["noext"] = d / "noext"
    f["noext"].write_text("hello there\n")
    # A 60-state random automaton: its image orbit passes 1 MiB at once.
    rng = random.Random(9)
    n = 60
    f["random"] = d / "r.json"
    f["random"].write_text(
        '{"states": [%s], "alphabet": ["a", "b"], "initial": 0, "transitions": '
        '{"a": [%s], "b": [%s]}}' % (",".join('"q%d"' % i for i in range(n)),
                                     ",".join(str(rng.randrange(n)) for _ in range(n)),
                                     ",".join(str(rng.randrange(n)) for _ in range(n))))
    for name in ("flipflop", "parity"):
        f[name] = d / (name + ".json")
        f[name].write_text(subprocess.run([krc_binary(), "zoo", name], capture_output=True,
                                          text=True, check=True).stdout)
    builds = {"kr": ("flipflop", "--strategy", "kr", "--max-len", 64),
              "parity8": ("parity", "--max-len", 8),
              "hard": ("parity", "--max-len", 8, "--attention", "hard")}
    for name, (source, *options) in builds.items():
        f[name] = d / (name + ".safetensors")
        subprocess.run([krc_binary(), "compile", f[source], *map(str, options), "-o", f[name]],
                       capture_output=True, check=True)
    return f


def budget(bytes_, call):
    previous = krc._core.max_memory()
    krc.set_max_memory(bytes_)
    try:
        call()
    finally:
        krc.set_max_memory(previous)


REGEX = "(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)"

# id: (the command's arguments, the Python call, [(the command's phrase, Python's phrase)]).
CASES = {
    "load_automaton initial": (
        lambda f: ["compile", f["partial"], "--initial", "nope", "-o", f["dir"] / "o"],
        lambda f: krc.load_automaton(str(f["partial"]), initial="nope"),
        [("--initial 'nope' is not a state", "initial 'nope' is not a state")]),
    "load_automaton input_format": (
        lambda f: ["compile", f["noext"], "-o", f["dir"] / "o"],
        lambda f: krc.load_automaton(str(f["noext"])),
        [(") or --input-format", ") or input_format")]),
    "from_regex max_subset_states": (
        lambda f: ["compile", "--regex", REGEX, "--max-subset-states", 16, "-o", f["dir"] / "o"],
        lambda f: krc.from_regex(REGEX, max_subset_states=16),
        [("(--max-subset-states raises the limit)", "(max_subset_states raises the limit)")]),
    "decompose max_memory": (
        lambda f: ["--max-memory", "1MiB", "decompose", f["random"]],
        lambda f: budget(1 << 20, lambda: krc.decompose(krc.load_automaton(str(f["random"])))),
        [("memory budget (--max-memory 1.00 MiB)", "memory budget (max_memory 1.00 MiB)")]),
    "compile max_onelayer_values": (
        lambda f: ["compile", f["parity"], "--strategy", "onelayer", "--max-onelayer-values", 1,
                   "-o", f["dir"] / "o"],
        lambda f: krc.compile(krc.load_automaton(str(f["parity"])), strategy="onelayer",
                              max_onelayer_values=1),
        [("(limit --max-onelayer-values 1)", "(limit max_onelayer_values 1)")]),
    "compile precision": (
        lambda f: ["compile", f["flipflop"], "--strategy", "kr", "--precision", "bf16",
                   "-o", f["dir"] / "o"],
        lambda f: krc.compile(krc.load_automaton(str(f["flipflop"])), strategy="kr",
                              precision="bf16"),
        [("; --strategy scan is exact in bf16", "; strategy scan is exact in bf16")]),
    "to_hf inexact": (
        lambda f: ["export", f["kr"], "--format", "gpt2", "-o", f["dir"] / "hf"],
        lambda f: krc.load(str(f["kr"])).to_hf(f["dir"] / "hf"),
        [("recompiling with `krc compile --norm layernorm` makes",
          'recompiling with `krc.compile(norm="layernorm")` makes'),
         ("; --allow-inexact (Python: allow_inexact=True) exports it anyway",
          "; allow_inexact=True exports it anyway")]),
    "to_hf max_bytes": (
        lambda f: ["export", f["parity8"], "--format", "gpt2", "--max-bytes", 100,
                   "-o", f["dir"] / "hf"],
        lambda f: krc.load(str(f["parity8"])).to_hf(f["dir"] / "hf", max_bytes=100),
        [("more than --max-bytes 100; raise --max-bytes (",
          "more than max_bytes 100; raise max_bytes (")]),
    "to_hf attention": (
        lambda f: ["export", f["hard"], "--format", "gpt2", "-o", f["dir"] / "hf"],
        lambda f: krc.load(str(f["hard"])).to_hf(f["dir"] / "hf"),
        [("GPT-2 runs softmax (compile with --attention softmax)",
          "GPT-2 runs softmax (compile with attention softmax)")]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_python_names_keywords_where_the_command_names_flags(files, case):
    cli_args, call, phrases = CASES[case]
    status, command = cli(*cli_args(files))
    assert status == 2, command
    with pytest.raises((krc.KrcError, ValueError)) as raised:
        call(files)
    python = str(raised.value)
    assert not FLAG.search(python), python
    for flag, keyword in phrases:
        assert flag in command, command  # the command line's message is unchanged
        assert keyword in python, python
        command = command.replace(flag, keyword)
    # The rest of the message is the same in both doors: the file (a path both read) and the
    # place, then the problem; a network made in Python has no file, so only the problem.
    problem = getattr(raised.value, "problem", "") or python
    if not command.endswith(problem):
        # compile's refusals name their input: the file on the command line, the automaton's
        # name (a bare name, no path) in Python; the rest is the same.
        name, _, rest = problem.partition(": ")
        assert rest and re.fullmatch(r"[\w.-]+", name), (command, python)
        assert command.endswith(": " + rest), (command, python)
    assert not (files["dir"] / "hf").exists()


def test_verify_bounds_name_keywords(files):
    """Network.verify's bounds are the command's (tools/front_door/verify_limits.hpp), named
    as keywords: the message once pointed at `krc verify --random`."""
    network = krc.load(str(files["parity8"]))
    status, command = cli("verify", files["parity8"], "--random", -1)
    assert status == 2 and "--random" in command, command
    for keyword, call in (("random", lambda: network.verify(random=-1, progress=False)),
                          ("threads", lambda: network.verify(threads=-1, progress=False))):
        with pytest.raises(ValueError) as raised:
            call()
        assert str(raised.value).startswith(keyword + " -1 is not in [0, "), str(raised.value)
        assert not FLAG.search(str(raised.value)), str(raised.value)


def test_reading_notes_name_keywords(files):
    """The readers' notes (`krc: note:` on the command line, krc.ReadingNote in Python) are
    spelt the same way: a DOT file with no start marker names `initial`, not `--initial`."""
    dot = files["dir"] / "nostart.dot"
    dot.write_text('digraph g { s -> t [label="a"]; t -> s [label="a"]; }\n')
    r = subprocess.run([krc_binary(), "compile", dot, "-o", files["dir"] / "o"],
                       capture_output=True, text=True)
    note = [l for l in r.stderr.splitlines() if l.startswith("krc: note: ")]
    assert r.returncode == 0 and note, r.stderr
    assert "convention; --initial names another)" in note[0], note
    with pytest.warns(krc.ReadingNote) as caught:
        krc.load_automaton(str(dot))
    python = [str(w.message) for w in caught]
    assert note[0][len("krc: note: "):].replace("--initial", "initial") in python, python
    assert not any(FLAG.search(m) for m in python), python
