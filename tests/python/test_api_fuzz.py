"""The argument fuzz of the Python API (issue 33, item 4): wrong types and out-of-range values
for every argument of every public function and method, generated from the signatures
(api_fuzz.py says how). Every case must raise a krc.KrcError, or a TypeError or ValueError
whose message names the argument and is no pybind11 signature dump; none may crash the
interpreter, hang (a per-case timeout) or allocate past the budget: the cases run in child
processes under an address-space limit (RLIMIT_AS, what `prlimit --as` sets), grouped so that
torch is imported once. Under AddressSanitizer (the sanitized lane preloads it) an address-space
limit cannot hold: ASan reserves terabytes of shadow before main. There the same budget is
ASan's own: no single allocation over it (a failed malloc returns NULL, so numpy raises
MemoryError, which counts as a failure) and a resident size over it kills the child (a crash).
Also: Network and Automaton pickle (the same bytes, the same runs), through a multiprocessing
worker."""

import json
import multiprocessing
import os
import pickle
import resource
import selectors
import subprocess
import sys
import time

import pytest

import krc
from api_fuzz import MARK

HERE = os.path.dirname(os.path.abspath(__file__))
SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")
SLOWDOWN = 8 if SANITIZED else 1  # a Debug build under ASan runs the same calls ~5x slower
ADDRESS_SPACE = 4 << 30  # bytes; torch's import alone reserves about 2 GiB
CASE_SECONDS = 20.0 * SLOWDOWN  # a case slower than this hangs (the slowest valid call takes ~3 s)



def limited():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def child_environment():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    if SANITIZED:
        megabytes = ADDRESS_SPACE >> 20
        env["ASAN_OPTIONS"] = "%s:allocator_may_return_null=1:max_allocation_size_mb=%d:" \
            "hard_rss_limit_mb=%d" % (env.get("ASAN_OPTIONS", ""), megabytes, megabytes)
    return env


def run_cases(group):
    """{index: outcome} of every case of a group; a case that crashes the child or passes
    CASE_SECONDS is recorded as such, and the next child goes on after it."""
    results, first, count = {}, 0, None
    env = child_environment()
    while count is None or first < count:
        child = subprocess.Popen([sys.executable, os.path.join(HERE, "api_fuzz.py"), group,
                                  str(first)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=env, preexec_fn=limited, text=True)
        selector = selectors.DefaultSelector()
        selector.register(child.stdout, selectors.EVENT_READ)
        current, deadline = None, time.monotonic() + 60 * SLOWDOWN  # the imports and fixtures first
        labels = {}
        while True:
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                child.kill()
                if current is None:
                    current = max(results) + 1 if results else first
                results[current] = {"label": labels.get(current, current), "outcome": "hung"}
                break
            line = child.stdout.readline()
            if not line:
                child.wait()
                if current is None:
                    pytest.fail("the fuzz child died before its cases: %s" % child.stderr.read())
                results[current] = {"label": labels[current], "outcome": "crashed",
                                    "status": child.returncode}
                break
            if not line.startswith(MARK):
                continue  # a library's own output (TransformerLens prints)
            message = json.loads(line[len(MARK):])
            if "count" in message:
                count = message["count"]
            elif "begin" in message:
                current = message["begin"]
                labels[current] = message["label"]
                deadline = time.monotonic() + CASE_SECONDS
            else:
                results[message["end"]] = message
                current = None
                deadline = time.monotonic() + CASE_SECONDS
                if message["end"] + 1 == count:
                    child.wait()
                    break
        child.kill()
        child.wait()
        child.stdout.close()
        child.stderr.close()
        first = max(results) + 1 if results else count
    return results


def failure(case):
    """Why a case is wrong, or None when it is right."""
    if case["outcome"] == "skipped":
        return None
    if case["outcome"] in ("hung", "crashed"):
        return case["outcome"]
    if case["outcome"] == "returned":
        return "accepted" if case["must_raise"] else None
    message = case["message"]
    if "incompatible function arguments" in message or "incompatible constructor" in message:
        return "pybind11 dump"
    if case["type"] == "MemoryError":
        return "MemoryError (past the budget)"
    if case["krc_error"]:
        return None
    if not case["type_or_value"]:
        return "%s is not a krc.KrcError, TypeError or ValueError" % case["type"]
    if case["parameter"] not in message:
        return "the message does not name %s" % case["parameter"]
    return None


@pytest.mark.parametrize("group", ["core", "frameworks"])
def test_every_wrong_argument_is_refused_by_name(group):
    if group == "frameworks":
        pytest.importorskip("torch")
        pytest.importorskip("transformer_lens")
        pytest.importorskip("onnx")
    results = run_cases(group)
    wrong = ["%s: %s (%s: %s)" % (c["label"], failure(c), c.get("type"), c.get("message", "")[:200])
             for c in results.values() if failure(c)]
    assert len(results) >= (400 if group == "core" else 30)
    assert not wrong, "\n".join(wrong)


def network_and_automaton():
    automaton = krc.load_automaton(os.path.join(HERE, "..", "..", "automata", "zoo",
                                                "gridworld_4.json"))
    return automaton, krc.compile(automaton, strategy="kr", max_len=32)


def run_in_worker(network, word):
    return network.run(word).states, network.run(word).margins


def test_pickled_networks_have_the_same_weights_and_runs_in_a_worker(tmp_path):
    automaton, network = network_and_automaton()
    again = pickle.loads(pickle.dumps(automaton))
    assert again == automaton and again.transitions == automaton.transitions
    copy = pickle.loads(pickle.dumps(network))
    network.save(tmp_path / "a.safetensors")
    copy.save(tmp_path / "b.safetensors")
    assert (tmp_path / "a.safetensors").read_bytes() == (tmp_path / "b.safetensors").read_bytes()
    word = (automaton.letters * 8)[:32]
    expected = automaton.run(word)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        states, margins = pool.apply(run_in_worker, (network, word))
    assert states == expected  # the automaton is the oracle
    assert list(margins) == list(network.run(word).margins)
