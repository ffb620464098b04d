"""Every combination of compile options through both doors (issue 33: "the command line gives the
same bytes"). The options come from the request layer's own table (tools/front_door/
compile_request.hpp, krc._core.compile_request_options): a choice is tried at every name the
layer admits, a number at the values TRIED names and just past its bounds, and an option the layer
has that TRIED does not name fails the test. For each case `krc compile` and krc.compile +
Network.save must write the same bytes (sha256) and report the same strategy, plan reason,
precision, certificate and sizes, or both refuse: the command line with exit status 2 and
`krc: error: MESSAGE`, Python with a krc.KrcError or ValueError whose message is MESSAGE spelt
with keywords for flags. The oracle is the other door; the automata's own runs check a few of the
networks (test_api_front_door.py verifies more)."""

import concurrent.futures
import hashlib
import inspect
import itertools
import json
import os
import re
import subprocess

import pytest

import krc
from conftest import REFERENCE, ZOO
from frameworks_support import krc_binary

REALWORLD = os.path.join(REFERENCE, "realworld", "files")

# How each option of the request layer is tried. "names": every name the layer admits (and
# None, the file's default, where the option may be left out); "flag": False and True; a list:
# those numbers. The options in CROSSED_FOR make the full product, for each strategy whose
# network they change ("auto" builds every strategy and keeps one, so it is crossed with what
# changes its choice); the others are tried one at a time beside the defaults, for every
# strategy, at each value and just past their bounds.
TRIED = {
    "strategy": "names",
    "precision": "names",
    "norm": "names",
    "counting": "names",
    "attention": "names",
    "output_kind": "names",
    "certify": "flag",
    "max_len": [1, 2, 9, 33],
    "max_onelayer_units": [1, 8],
    "max_onelayer_values": [1, 5],
}
EVERY = ("auto", "scan", "kr", "onelayer")
CROSSED_FOR = {
    "precision": EVERY,
    "output_kind": EVERY,
    "certify": EVERY,
    "norm": ("scan", "kr", "onelayer"),
    "counting": ("kr",),
}
MAX_LEN = 8  # of the crossed cases: small enough to certify in milliseconds

# Small automata of each network kind: scan and kr (parity, 2 states), kr's time-shifted memory
# (flipflop_2, 3 states), kr's counters (cyclic_3, 3 states), the clamped walk (gridworld_4);
# and Mealy and Moore outputs (AALpy's files), whose output kinds are crossed with the strategy
# and precision. An output kind a file does not carry is refused: tried once per strategy.
FULL = [os.path.join(ZOO, n) for n in
        ("parity.json", "flipflop_2.json", "cyclic_3.json", "gridworld_4.json")]
OUTPUTS = [os.path.join(REALWORLD, n) for n in
           ("aalpy__simple_abc_mealy.dot", "aalpy__coffee_moore.dot")]
FILES = FULL + OUTPUTS
# In the sanitized lane (a Debug build under AddressSanitizer: 358 cases took 160 s) every
# SAMPLE-th case only; the Release suite runs them all.
SAMPLE = 30 if "libasan" in os.environ.get("LD_PRELOAD", "") else 1


def layer_options():
    return {o["keyword"]: o for o in krc._core.compile_request_options()}


def values(option):
    how = TRIED[option["keyword"]]
    if how == "names":
        return ([None] if option["optional"] else []) + list(option["names"])
    if how == "flag":
        return [False, True]
    return how


def carried(automaton, option):
    """The output kinds `automaton`'s file carries (the others are refused, whatever else)."""
    kinds = []
    for kind in values(option):
        try:
            krc.compile(automaton, strategy="scan", max_len=1, output_kind=kind)
            kinds.append(kind)
        except krc.InputError:
            pass
    return kinds


def crossed_cases(options, automaton, axes_of):
    """Per strategy, the full product of the crossed options that strategy's network answers."""
    kinds = carried(automaton, options["output_kind"])
    for strategy in options["strategy"]["names"]:
        axes = [k for k in axes_of if strategy in CROSSED_FOR[k]]
        tried = [kinds if k == "output_kind" else values(options[k]) for k in axes]
        for combo in itertools.product(*tried):
            case = {"strategy": strategy, "max_len": MAX_LEN}
            case.update((k, v) for k, v in zip(axes, combo) if v is not None and v is not False)
            yield case
        for kind in set(values(options["output_kind"])) - set(kinds):
            yield {"strategy": strategy, "max_len": MAX_LEN, "output_kind": kind}


def single_cases(options):
    """Each uncrossed option at each tried value and just past its bounds, for every strategy."""
    for keyword, option in options.items():
        if keyword == "strategy" or keyword in CROSSED_FOR:
            continue
        tried = list(values(option))
        if option["kind"] == "number":
            tried += [option["min"] - 1, option["max"] + 1]
        for strategy, value in itertools.product(options["strategy"]["names"], tried):
            case = {"strategy": strategy, "max_len": MAX_LEN}
            case[keyword] = value
            yield case


def all_cases(options, automata):
    cases = []
    for path in FULL:
        cases += [(path, c) for c in crossed_cases(options, automata[path], list(CROSSED_FOR))]
        cases += [(path, c) for c in single_cases(options)]
    for path in OUTPUTS:
        cases += [(path, c) for c in crossed_cases(options, automata[path],
                                                   ["precision", "output_kind"])]
    return cases


def command_line(path, case, out):
    args = [krc_binary(), "compile", path, "-o", out, "--json"]
    for key, value in case.items():
        if value is True:
            args.append("--" + key.replace("_", "-"))
        elif value is not False and value is not None:
            args += ["--" + key.replace("_", "-"), str(value)]
    return subprocess.run(args, capture_output=True, text=True)


def python_door(automaton, case, out):
    try:
        network = krc.compile(automaton, **case)
        network.save(out)
        return network, None
    except (krc.KrcError, ValueError) as e:
        return None, e


def flags_as_keywords(text):
    return re.sub(r"--([a-z][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"), text)


def compare(path, automaton, case, cli, cli_out, network, error, py_out):
    """A list of what differs between the doors for one case (empty: the same)."""
    where = "%s %s: " % (os.path.basename(path), case)
    if cli.returncode == 0:
        if error is not None:
            return [where + "the command line compiled, Python raised %r" % error]
        digests = [hashlib.sha256(open(p, "rb").read()).hexdigest() for p in (cli_out, py_out)]
        if digests[0] != digests[1]:
            return [where + "different bytes"]
        report = json.loads(cli.stdout)
        size = network.size
        python_report = {
            "strategy": network.strategy, "reason": network.reason,
            "precision": network.compiler["precision"],
            "certified": network.compiler.get("certified"),
            "automaton": {"name": network.automaton.name,
                          "states": len(network.automaton.states),
                          "letters": len(network.automaton.letters)},
            "bytes": os.path.getsize(py_out),
            "network": {"d_model": size.d_model, "heads": size.heads, "layers": size.layers,
                        "parameters": size.parameters}}
        cli_report = {k: report.get(k) for k in python_report}
        cli_report["network"] = {k: report["network"].get(k) for k in python_report["network"]}
        return [] if cli_report == python_report else \
            [where + "reports differ: %s / %s" % (cli_report, python_report)]
    if error is None:
        return [where + "only the command line refused: " + cli.stderr.strip()]
    if cli.returncode != 2:
        return [where + "the command line's status is %d" % cli.returncode]
    lines = cli.stderr.strip().splitlines()
    errors = [line[len("krc: error: "):] for line in lines if line.startswith("krc: error: ")]
    # Names and bounds are checked while the command line is parsed, by the request layer's
    # own checks, so CLI11 prints the layer's words after the flag ("--max-len: 0 is not in
    # [1, 1048576]"; Python: "max_len 0 is not in [1, 1048576]").
    if not errors:
        return [where + "the command line's message: " + cli.stderr]
    # One message, two spellings: the flags become keywords, the file the automaton's name.
    said = flags_as_keywords(errors[0]).replace(path, automaton.name)
    said = said.replace("command line: ", "")
    if isinstance(error, krc.KrcError):
        return [] if said == str(error) else \
            [where + "messages differ: %r / %r" % (said, str(error))]
    # A ValueError names the keyword, then the layer's words; the command line says the same
    # words after the flag (CLI11's colon between them when it was refused while parsing).
    keyword, rest = str(error).split(" ", 1)
    return [] if said in (keyword + ": " + rest, keyword + " " + rest) else \
        [where + "messages differ: %r / %r" % (said, str(error))]


@pytest.mark.frameworks
def test_the_table_names_every_option_of_the_request_layer():
    options = layer_options()
    assert set(TRIED) == set(options), "an option of the request layer is not tried"
    assert set(CROSSED_FOR) <= set(options)
    # The layer's table is krc.compile's keywords, with the same defaults.
    signature = inspect.signature(krc.compile).parameters
    assert set(options) == set(signature) - {"automaton", "progress"}
    for keyword, option in options.items():
        default = signature[keyword].default
        assert option["default"] == ("" if default is None else default), keyword


@pytest.mark.frameworks
def test_every_combination_gives_the_same_bytes_in_both_doors(tmp_path):
    options = layer_options()
    automata = {path: krc.load_automaton(path) for path in FILES}
    cases = all_cases(options, automata)
    # Every name of every choice is tried somewhere (a name the layer adds is not skipped).
    for keyword, option in options.items():
        for value in values(option):
            assert any(c.get(keyword, None if option["optional"] else options[keyword][
                "default"]) == value for _, c in cases), (keyword, value)

    cases = cases[::SAMPLE]

    def run_command_line(index):
        path, case = cases[index]
        out = str(tmp_path / ("cli%d.safetensors" % index))
        return command_line(path, case, out), out

    differences, compiled, refused = [], 0, 0
    # The command line runs beside the Python door (two processes at a time): one interpreter,
    # many cases.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for index, future in enumerate(pool.map(run_command_line, range(len(cases)))):
            path, case = cases[index]
            py_out = str(tmp_path / "python.safetensors")
            network, error = python_door(automata[path], case, py_out)
            cli, cli_out = future
            differences += compare(path, automata[path], case, cli, cli_out, network, error,
                                   py_out)
            compiled += cli.returncode == 0
            refused += cli.returncode != 0
            for p in (cli_out, py_out):
                if os.path.exists(p):
                    os.remove(p)
    assert not differences, "\n".join(differences[:20])
    # Both outcomes are exercised in number (of 1,320 cases, 491 compile and 829 are refused).
    assert compiled > len(cases) // 4 and refused > len(cases) // 4, (compiled, refused)
