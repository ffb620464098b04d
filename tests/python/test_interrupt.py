"""Ctrl-C (issue 33, item 3): SIGINT stops compile, verify, decompose, certify and export within
a second, on the command line (exit status 130, "krc: interrupted", no output and no temporary
left) and in Python (KeyboardInterrupt from krc.compile, Network.verify(progress=False),
krc.decompose and Network.to_hf). Each case is long on purpose: without the interruption it
runs for tens of seconds (a 20,000-state random automaton's semigroup, 10^6 words, a
200-state orbit of millions of images, a 1.3 GB checkpoint), so stopping within the bound is
the interruption's doing. Each child starts with SIGINT at its default, as from a terminal."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from frameworks_support import REPO, krc, krc_binary

BOUND = 1.5  # seconds from SIGINT to the exit (the issue asks for 1 s; slack for a loaded CI)


def default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def random_automaton(path, states, letters, seed):
    r = random.Random(seed)
    names = ["s%d" % i for i in range(states)]
    transitions = {"a%d" % j: [names[r.randrange(states)] for _ in range(states)]
                   for j in range(letters)}
    with open(path, "w") as f:
        json.dump({"name": "random%d" % states, "states": names,
                   "alphabet": list(transitions), "initial": "s0",
                   "transitions": transitions}, f)
    return str(path)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The long inputs, in a directory of their own (the outputs go to another)."""
    if krc_binary() is None:
        pytest.skip("no krc binary (build/krc or $KRC_BINARY)")
    d = tmp_path_factory.mktemp("inputs")
    s5 = d / "s5.json"
    s5.write_text(krc("zoo", "symmetric").stdout)
    krc("compile", s5, "--strategy", "scan", "-o", d / "s5.krc")
    krc("compile", s5, "--strategy", "scan", "--norm", "layernorm", "-o", d / "s5ln.krc")
    # The 55-state TCP server in binary coordinates: the selector rule certifies it in ~10 s.
    tcp = os.path.join(REPO, "tests", "reference", "realworld", "files",
                       "aalpy__TCP_tcp_server_bsd_trans.dot")
    krc("compile", tcp, "--output-kind", "state", "--strategy", "scan", "--precision", "bf16",
        "--max-len", "1024", "-o", d / "tcp.krc")
    return {"tcp": str(d / "tcp.krc"),"big": random_automaton(d / "big.json", 20000, 2, 1),
            "orbit": random_automaton(d / "orbit.json", 200, 2, 3),
            "s5": str(d / "s5.krc"), "s5ln": str(d / "s5ln.krc")}


def interrupt(argv, cwd, ready=None, env=None):
    """Starts argv in cwd, waits until it works (a second, or half a second after a line holding
    `ready` on stderr (a progress line) or stdout (Python's "ready" before the call)), sends
    SIGINT; the exit status, the seconds from SIGINT to the exit, and stderr."""
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    seen = []
    try:
        if ready is None:
            time.sleep(1.0)
        else:
            stream, text = ready
            seen.append(getattr(child, stream).readline())
            while text not in seen[-1] and seen[-1] and len(seen) < 20:
                seen.append(getattr(child, stream).readline())
            assert text in seen[-1], "%s: before SIGINT: %r" % (argv, seen)
            time.sleep(0.5)  # into the work
        assert child.poll() is None, "%s ended before SIGINT" % argv
        start = time.monotonic()
        child.send_signal(signal.SIGINT)
        try:
            _, err = child.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("%s did not stop within 30 s of SIGINT" % argv)
        seconds = time.monotonic() - start
        shown = "".join(seen) if ready and ready[0] == "stderr" else ""
        return child.returncode, seconds, shown + err
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


CLI = {
    "compile": (["compile", "{big}", "-o", "out.krc"], None),
    "verify": (["verify", "{s5}", "--exhaustive", "0", "--random", "1000000", "--threads", "1",
                "--progress"], "verifying: "),
    "decompose": (["decompose", "{orbit}", "-o", "out.txt"], "images so far"),
    "certify": (["certify", "{s5}", "-o", "cert.json"], None),
    "certify-selector": (["certify", "{tcp}", "--arithmetic", "bf16", "--rule", "selector", "-o",
                          "cert.json"], None),
    # The TCP network's dense export takes seconds; symmetric_5's finished within the second
    # this test waits on an idle CI machine (exit 0 before SIGINT).
    "export-transformer-lens": (["export", "{tcp}", "-o", "out.safetensors"], None),
    "export-gpt2": (["export", "{s5ln}", "--format", "gpt2", "-o", "checkpoint"], None),
    "suite": (["suite", "--set", "zoo", "-o", "suite"], None),
}


@pytest.mark.parametrize("case", sorted(CLI))
def test_the_command_line_stops_on_sigint_with_status_130_and_no_output(case, inputs, tmp_path):
    arguments, ready = CLI[case]
    argv = [krc_binary()] + [a.format(**inputs) for a in arguments]
    status, seconds, err = interrupt(argv, tmp_path, ready and ("stderr", ready))
    assert status == 130, (status, err[-500:])
    assert seconds < BOUND
    assert err.splitlines()[-1] == "krc: interrupted"
    assert os.listdir(tmp_path) == []  # no output, no .krc-tmp-* temporary
    if case == "verify":  # item 7: off a terminal, progress comes as whole lines, no \r
        assert "\r" not in err and err.endswith("\n")


PYTHON = {
    "compile": "a = krc.load_automaton({big!r})\nready()\nkrc.compile(a)",
    "verify": "n = krc.load({s5!r})\nready()\n"
              "n.verify(exhaustive=0, random=10**6, threads=1, progress=False)",
    "decompose": "a = krc.load_automaton({orbit!r})\nready()\nkrc.decompose(a)",
    "to_hf": "n = krc.load({s5ln!r})\nready()\nn.to_hf('checkpoint')",
    "suite": "ready()\nkrc.suite('suite', set='zoo')",
}


@pytest.mark.parametrize("case", sorted(PYTHON))
def test_python_raises_keyboard_interrupt_within_the_bound(case, inputs, tmp_path):
    code = ("import krc\n"
            "def ready():\n"
            "    print('ready', flush=True)\n" + PYTHON[case].format(**inputs))
    status, seconds, err = interrupt([sys.executable, "-c", code], tmp_path, ("stdout", "ready"),
                                     env=os.environ.copy())
    assert err.rstrip().splitlines()[-1] == "KeyboardInterrupt", err[-500:]
    assert status == -signal.SIGINT  # Python ends by the signal after an uncaught KeyboardInterrupt
    assert seconds < BOUND
    assert os.listdir(tmp_path) == []


def test_python_after_an_interrupt_the_next_call_runs_whole(inputs, tmp_path):
    # The flag is cleared when the call ends: a caught KeyboardInterrupt leaves krc usable.
    code = ("import krc\n"
            "a = krc.load_automaton(%r)\n"
            "print('ready', flush=True)\n"
            "try:\n"
            "    krc.compile(a)\n"
            "except KeyboardInterrupt:\n"
            "    n = krc.compile(krc.zoo('parity'), max_len=64)\n"
            "    print('verified' if n.verify(progress=False) else 'wrong', flush=True)\n"
            % inputs["big"])
    child = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert (out.strip(), child.returncode) == ("verified", 0), err[-500:]
