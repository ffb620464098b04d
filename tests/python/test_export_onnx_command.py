"""`krc export FILE --format onnx -o OUT` (issue 33 item 6): the command line's ONNX export is the
Python package's (tools/export_onnx.py runs krc.onnx_export), so both doors write the same
bytes; onnxruntime runs the command line's file and every position's argmax is the automaton's
state (the oracle reads the automaton from the weights file with the real safetensors package
and runs it letter by letter); refusals exit 2 with nothing written."""
import json
import os
import stat
import threading

import numpy as np
import pytest

import krc as krc_package
from frameworks_support import Oracle, compile_zoo, krc, onnx_session

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("torch")
pytestmark = pytest.mark.frameworks

CASES = [("gridworld_9", "kr", 24), ("parity", "scan", 32)]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: "%s_%s" % c[:2])
def network(request, tmp_path_factory):
    name, strategy, max_len = request.param
    return compile_zoo(tmp_path_factory.mktemp("onnx"), name, strategy, max_len)


@pytest.fixture(scope="module")
def flipflop(tmp_path_factory):
    """One network for the refusals and the FIFO: each export starts Python (seconds)."""
    return compile_zoo(tmp_path_factory.mktemp("onnx"), "flipflop_2", "kr", 16)


@pytest.fixture(scope="module")
def exported(network):
    """The command line's ONNX file of `network`, and its --json summary."""
    path = network[:-len(".safetensors")] + ".onnx"
    summary = json.loads(krc("export", network, "--format", "onnx", "-o", path, "--json").stdout)
    return path, summary


def test_the_command_writes_the_bytes_python_writes(network, exported, tmp_path):
    command_file, summary = exported
    assert summary == {"file": network, "output": command_file, "format": "onnx",
                       "bytes": os.path.getsize(command_file)}
    python_file = tmp_path / "python.onnx"
    krc_package.load(network).to_onnx(python_file)
    with open(command_file, "rb") as f:
        assert f.read() == python_file.read_bytes()


def test_onnxruntime_gives_the_automatons_states(network, exported):
    path, _ = exported
    oracle = Oracle.of_file(network)
    states = krc_package.load(network).states
    session = onnx_session(str(path))
    max_len = krc_package.load(network).max_len
    for word in oracle.words(seed=5, count=6, longest=max_len, short=max_len // 2):
        tokens = np.array([[0] + [oracle.letters.index(a) + 1 for a in word]], np.int64)
        logits = session.run(["logits"], {"tokens": tokens})[0]
        assert [states[i] for i in logits[0].argmax(axis=1)] == oracle.run(word), word


def test_refusals_exit_2_and_write_nothing(flipflop, tmp_path):
    network = flipflop
    before = os.stat(network)
    cases = [(["-o", network], "is the input file"),
             (["-o", "-"], "not to stdout"),
             (["-o", tmp_path / "small.onnx", "--max-bytes", "64"], "more than --max-bytes 64")]
    for args, message in cases:
        result = krc("export", network, "--format", "onnx", *args, check=False)
        assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "small.onnx").exists()
    assert os.stat(network).st_mtime_ns == before.st_mtime_ns
    not_krc = tmp_path / "not_krc.safetensors"
    not_krc.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    result = krc("export", not_krc, "--format", "onnx", "-o", tmp_path / "x.onnx", check=False)
    assert result.returncode == 2 and str(not_krc) in result.stderr
    assert not (tmp_path / "x.onnx").exists()


def test_a_fifo_target_is_written_in_place_never_replaced(flipflop, tmp_path):
    network = flipflop
    fifo = tmp_path / "fifo.onnx"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    krc("export", network, "--format", "onnx", "-o", fifo)
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    krc_package.load(network).to_onnx(tmp_path / "python.onnx")
    assert received == [(tmp_path / "python.onnx").read_bytes()]
