"""One front door (issue 33): the krc command and krc.compile take the same options with the
same defaults and bounds, and build the same bytes from the same file; the Python automaton
keeps a file's outputs; Automaton and Network pickle; the letter <bos> is refused where an
Automaton is made. The oracle for "same network" is the command line's own file, byte for
byte."""

import inspect
import json
import os
import pickle
import re
import subprocess

import pytest

import krc
from conftest import REFERENCE, ZOO
from frameworks_support import krc_binary

REALWORLD = os.path.join(REFERENCE, "realworld", "files")

# Command-line options of `krc compile` that are neither krc.compile's nor krc.load_automaton's
# keywords, and where Python has them.
ELSEWHERE = {
    "--output": "Network.save(path)",
    "--dense": "Network.save(path, dense=True)",
    "--json": "the Network's attributes",
    "--help": "help(krc.compile)",
    "--max-memory": "krc.set_max_memory",
    "--format": "refused on compile: the alias users mistake for --input-format",
    "--regex": "krc.from_regex(pattern)",
    "--alphabet": "krc.from_regex(pattern, alphabet=)",
}


def command_options(command):
    text = subprocess.run([krc_binary(), command, "--help"], capture_output=True, text=True,
                          check=True).stdout
    return sorted(set(re.findall(r"(--[a-z][a-z0-9-]+)", text)))


@pytest.mark.frameworks
def test_every_compile_option_is_a_keyword():
    compile_keywords = set(inspect.signature(krc.compile).parameters) - {"automaton", "progress"}
    load_keywords = set(inspect.signature(krc.load_automaton).parameters) - {"path"}
    assert set(inspect.signature(krc.parse_automaton).parameters) - {"text", "file"} == \
        load_keywords
    options = {o[2:].replace("-", "_") for o in command_options("compile")
               if o not in ELSEWHERE}
    assert options == compile_keywords | load_keywords


def compile_both(tmp_path, path, options):
    """The bytes `krc compile PATH` writes and those krc.compile writes, with `options`."""
    out = str(tmp_path / "cli.safetensors")
    args = [krc_binary(), "compile", path, "-o", out]
    for key, value in options.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    result = subprocess.run(args, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    network = krc.compile(krc.load_automaton(path), **options)
    network.save(tmp_path / "py.safetensors")
    return (open(out, "rb").read(), (tmp_path / "py.safetensors").read_bytes(), network)


CASES = [
    ("gridworld_9.json", {}),
    ("gridworld_9.json", {"strategy": "scan", "max_len": 64}),
    ("symmetric_3.json", {"strategy": "kr", "counting": "blocks", "max_len": 256}),
    ("cyclic_5.json", {"strategy": "kr", "max_len": 4096, "counting": "dyadic"}),
    ("flipflop_2.json", {"precision": "bf16", "max_len": 64}),
    ("parity.json", {"precision": "fp16", "norm": "layernorm", "max_len": 32}),
    ("abab.json", {"attention": "hard", "strategy": "onelayer", "max_len": 8}),
    ("aalpy__simple_abc_mealy.dot", {}),
    ("aalpy__simple_abc_mealy.dot", {"output_kind": "state"}),
    ("aalpy__coffee_moore.dot", {"max_len": 16}),
    ("aalpy__tomita_3.dot", {"precision": "bf16", "max_len": 16}),
]


@pytest.mark.frameworks
@pytest.mark.parametrize("name,options", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_both_doors_build_the_same_bytes(tmp_path, name, options):
    path = os.path.join(ZOO if name.endswith(".json") else REALWORLD, name)
    cli, python, network = compile_both(tmp_path, path, options)
    assert cli == python
    assert network.verify(exhaustive=4, random=4, progress=False).ok


def test_a_mealy_file_answers_its_outputs_in_python_too():
    path = os.path.join(REALWORLD, "aalpy__simple_abc_mealy.dot")
    automaton = krc.load_automaton(path)
    outputs = set(o for row in automaton._outputs[0] for o in row)
    network = krc.compile(automaton, max_len=16)
    # States named by the Mealy output of the letter just read ("-" before any letter).
    assert set(network.states) - {"-"} <= {s.split("#")[0] for s in outputs} | outputs
    states = krc.compile(automaton, max_len=16, output_kind="state").states
    assert states == automaton.states


def test_bounds_and_names_are_the_command_lines(tmp_path):
    a = krc.zoo("parity")
    for bad in (0, 2**20 + 1, 2**31 - 1, 2**63 - 1):
        with pytest.raises(ValueError, match=r"max_len %d is not in \[1, 1048576\]" % bad):
            krc.compile(a, max_len=bad)
    with pytest.raises(ValueError, match=r'precision "fp64": must be one of "fp32", "bf16"'):
        krc.compile(a, precision="fp64")
    with pytest.raises(ValueError, match='counting "often"'):
        krc.compile(a, counting="often")
    with pytest.raises(krc.InputError, match="output_kind mealy: the file has no Mealy"):
        krc.compile(a, output_kind="mealy")
    with pytest.raises(TypeError, match="automaton must be a krc.Automaton"):
        krc.compile("parity.json")
    # The command line says the same with its flags.
    r = subprocess.run([krc_binary(), "compile", os.path.join(ZOO, "parity.json"), "-o",
                        str(tmp_path / "x"), "--output-kind", "mealy"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "--output-kind mealy: the file has no Mealy" in r.stderr


def test_max_onelayer_values_is_bounded_before_planning(tmp_path):
    # Past 2^22 the planner's time and memory run away (2^24: 43 s for parity at max_len 8;
    # 2^31 - 1: over a minute and 2 GB), so more is refused at once, naming the keyword; the
    # bound itself is taken.
    a = krc.zoo("parity")
    for bad in (0, 2**22 + 1, 2**24, 2**31 - 1, 2**63 - 1):
        with pytest.raises(ValueError,
                           match=r"^max_onelayer_values %d is not in \[1, 4194304\]$" % bad):
            krc.compile(a, strategy="onelayer", max_len=8, max_onelayer_values=bad)
    net = krc.compile(a, strategy="onelayer", max_len=8, max_onelayer_values=2**22)
    # Parity counts the 1s: the automaton's own states are the oracle.
    assert net.run("1 0 1 1 0 1").states[-1] == "even"
    assert net.run("1 0 1 1 0 1 1").states[-1] == "odd"
    # The command line refuses it the same way, naming its flag, before reading the automaton.
    r = subprocess.run([krc_binary(), "compile", os.path.join(ZOO, "parity.json"), "-o",
                        str(tmp_path / "x"), "--max-onelayer-values", str(2**22 + 1)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--max-onelayer-values" in r.stderr and "4194304" in r.stderr
    assert not (tmp_path / "x").exists()


def test_the_letter_bos_is_refused_by_the_constructor():
    with pytest.raises(ValueError, match="'<bos>' is reserved"):
        krc.Automaton("a", ["q"], ["x", "<bos>"], [[0], [0]], "q")


def test_automaton_and_network_pickle(tmp_path):
    path = os.path.join(REALWORLD, "aalpy__simple_abc_mealy.dot")
    automaton = krc.load_automaton(path)
    again = pickle.loads(pickle.dumps(automaton))
    assert again == automaton and again._outputs == automaton._outputs
    network = krc.compile(automaton, max_len=16)
    copy = pickle.loads(pickle.dumps(network))
    assert copy.states == network.states
    word = automaton.letters[:3] * 4
    assert copy.run(word).states == network.run(word).states
    network.save(tmp_path / "a")
    copy.save(tmp_path / "b")
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def keywords(function):
    """A function's keywords: from its signature, or from a pybind11 method's docstring."""
    try:
        return set(inspect.signature(function).parameters) - {"self"}
    except (TypeError, ValueError):
        head = function.__doc__.splitlines()[0]
        return set(re.findall(r"(\w+): [^,)]+", head.split("(", 1)[1])) - {"self"}


@pytest.mark.frameworks
def test_verify_run_export_and_decompose_options_are_keywords():
    """Every option of `krc verify`, `run`, `export` and `decompose` is a keyword of the Python
    call that does the same, and every keyword of those calls is an option (issue 33: one door's
    options, the other's keywords). The options that live elsewhere say where."""
    shared = {"--help", "--json", "--float64"}  # help(); the result's attributes; arithmetic=
    as_keywords = lambda command, skip: {o[2:].replace("-", "_")
                                         for o in command_options(command) if o not in skip}
    assert as_keywords("verify", shared) == keywords(krc.Network.verify)
    assert as_keywords("run", shared) == keywords(krc.Network.run) - {"word"}
    # export: --format gpt2 is Network.to_hf (--format transformer-lens: to_transformer_lens).
    assert as_keywords("export", shared | {"--output", "--format"}) == \
        keywords(krc.Network.to_hf) - {"directory"}
    # decompose: the reading options are load_automaton's, the limits decompose's, the outputs
    # the Decomposition's methods (text, to_json, to_dot).
    decomposition = krc.decompose(krc.zoo("flipflop_2"))
    where = {"max_elements": [decomposition.text, decomposition.to_json],
             "max_drawn_sets": [decomposition.to_dot], "draw": [decomposition.draw]}
    elsewhere = {"--help", "--output", "--format", "--quiet", "--regex", "--alphabet",
                 "--no-tables"}
    reading = keywords(krc.load_automaton) - {"path"}
    limits = keywords(krc.decompose) - {"automaton", "tables"}
    options = as_keywords("decompose", elsewhere)
    assert options == reading | limits | set(where)
    assert "max_elements" in keywords(decomposition.text)
    assert "max_elements" in keywords(decomposition.to_json)
    assert "max_sets" in keywords(decomposition.to_dot)


@pytest.mark.frameworks
def test_suite_options_are_keywords():
    """`krc suite`'s options are krc.suite's keywords and the other way round (issue 35): the
    files are the command's arguments and Python's `files`, the directory its -o and Python's
    first argument; --json and --progress print (Python returns the manifest and takes a
    progress callable)."""
    options = {o[2:].replace("-", "_") for o in command_options("suite")
               if o not in {"--help", "--json", "--output", "--progress"}}
    assert options == keywords(krc.suite) - {"directory", "files", "progress"}
    # The same defaults: the command's --help shows them, krc.suite's signature holds them.
    text = subprocess.run([krc_binary(), "suite", "--help"], capture_output=True, text=True,
                          check=True).stdout
    defaults = inspect.signature(krc.suite).parameters
    for option in ("set", "strategies", "norm", "max_len", "random", "max_models", "max_bytes"):
        shown = re.search(r"--%s [^\n]*=(\S+)( \.\.\.)?\n" % option.replace("_", "-"), text)
        default = defaults[option].default
        if isinstance(default, tuple):  # CLI11 shows a list as [a,b]
            default = "[%s]" % ",".join(default)
        assert shown and shown.group(1) == str(default), (option, shown)


def test_decomposition_outputs_are_the_command_lines(tmp_path):
    """Decomposition.text(), to_json() and to_dot() are what `krc decompose` prints in its three
    formats for the same file, with the same limits."""
    path = os.path.join(ZOO, "gridworld_4.json")
    decomposition = krc.decompose(krc.load_automaton(path))
    printed = lambda *args: subprocess.run([krc_binary(), "decompose", path, *args],
                                           capture_output=True, text=True, check=True).stdout
    assert decomposition.text() == printed()
    assert decomposition.to_json() == json.loads(printed("--format", "json"))
    assert decomposition.to_dot() == printed("--format", "dot")
    assert decomposition.to_json(max_elements=3) == \
        json.loads(printed("--format", "json", "--max-elements", "3"))
    with pytest.raises(krc.LimitError, match="max_sets"):
        decomposition.to_dot(max_sets=1)
    with pytest.raises(ValueError):
        decomposition.to_dot(max_sets=0)


def test_compile_certify_is_one_option_of_both_doors(tmp_path):
    # `krc compile --certify` and krc.compile(certify=True) prove the network before handing it
    # out (issue 36, item 3): the same bytes from both, the claim in the file's compiler notes,
    # `krc info` showing it; the claim is what `krc certify` proves again from the written file.
    path = os.path.join(ZOO, "gridworld_4.json")
    out = str(tmp_path / "cli.safetensors")
    options = ["--strategy", "scan", "--precision", "bf16", "--max-len", "64"]
    r = subprocess.run([krc_binary(), "compile", path, *options, "--certify", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "certified at compile time (krc compile --certify): every word up to max-len 64 in " \
           "bf16" in r.stdout
    network = krc.compile(krc.load_automaton(path), strategy="scan", precision="bf16", max_len=64,
                          certify=True)
    network.save(str(tmp_path / "python.safetensors"))
    assert open(out, "rb").read() == open(tmp_path / "python.safetensors", "rb").read()
    claim = network.compiler["certified"]
    again = subprocess.run([krc_binary(), "certify", out, "--arithmetic", "bf16", "--json"],
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stdout
    proved = json.loads(again.stdout)["claim"]
    for key in ("max_len", "arithmetic", "rule", "margin", "statement"):
        assert claim[key] == proved[key], key
    info = subprocess.run([krc_binary(), "info", out], capture_output=True, text=True, check=True)
    assert "certified at compile time" in info.stdout and "max-len 64 in bf16" in info.stdout
    # Without the option nothing is claimed.
    plain = str(tmp_path / "plain.safetensors")
    subprocess.run([krc_binary(), "compile", path, *options, "-o", plain], check=True,
                   capture_output=True)
    info = subprocess.run([krc_binary(), "info", plain], capture_output=True, text=True, check=True)
    assert "certified" not in info.stdout


def test_compile_certify_refuses_what_certify_does_not_cover_and_writes_nothing(tmp_path):
    # A kr network with a memory unit is a question certify does not answer yet (its heads
    # hold, their copies are not followed: undecided): both doors refuse it with certify's
    # message (exit 2 on the command line, InputError in Python) and nothing is written.
    path = os.path.join(ZOO, "flipflop_2.json")
    out = tmp_path / "kr.safetensors"
    r = subprocess.run([krc_binary(), "compile", path, "--strategy", "kr", "--certify", "-o",
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert "--certify: the network is not certified (undecided): layer 0" in r.stderr
    assert "a select head's copy" in r.stderr
    assert not out.exists() and os.listdir(tmp_path) == []
    with pytest.raises(krc.InputError, match="certify: the network is not certified .undecided."):
        krc.compile(krc.load_automaton(path), strategy="kr", certify=True)
