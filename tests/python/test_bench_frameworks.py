"""Issue 37 item 4: `krc bench frameworks` runs krc, PyTorch (dense and sparse) and onnxruntime on
the same words and says per method whether every position was the automaton's state.

The oracle for "right" is the bench's own run of the automaton, so these tests check it from
outside: a network whose unembedding has its two states' columns swapped (written here with
the official safetensors writer) answers the other state everywhere, and every method must be
reported wrong at word 0, position 0 (the empty prefix), with no time; a Python where torch
and onnxruntime cannot be imported names them and still times krc."""
import json
import os
import subprocess
import sys

import pytest

from frameworks_support import compile_zoo, krc_binary

pytestmark = pytest.mark.frameworks

METHODS = ["krc", "torch", "torch-sparse", "onnxruntime"]


def bench(path, env=None):
    """`krc bench frameworks` on 2 words of 12 letters, 2 rounds, in this test's Python."""
    result = subprocess.run(
        [krc_binary(), "bench", "frameworks", path, "--words", "2", "--length", "12",
         "--repetitions", "2", "--json", "--python", sys.executable],
        capture_output=True, text=True, env=env, timeout=120)
    report = json.loads(result.stdout) if result.stdout.strip() else None
    return result, report


@pytest.fixture(scope="module")
def parity(tmp_path_factory):
    return compile_zoo(tmp_path_factory.mktemp("bench"), "parity", "kr", 16)


def multiply_adds_from_the_file(path, length):
    """The useful multiply-adds per word (tools/README.md "Frameworks side by side"), counted
    from the file's tensors as the official safetensors reader gives them: a sparse matrix X is
    X.indices and X.values (runtime/README.md), the heads' q, k, v [H, d, e] and o [H, e, d]."""
    import numpy as np
    from safetensors import safe_open

    with safe_open(path, "np") as f:
        t = {name: f.get_tensor(name) for name in f.keys()}
    nonzero = {name: int(np.count_nonzero(t[name + ".values"] if name + ".values" in t
                                          else t[name]))
               for name in {n[: -len(".values")] if n.endswith(".values") else n for n in t}
               if not name.endswith(".indices")}
    per_position = nonzero["unembed"] + sum(
        n for name, n in nonzero.items()
        if name.split(".")[-1] in ("q", "k", "v", "o") or name.endswith("weight"))
    per_key = 0
    for name in t:
        if name.endswith("attn.q"):
            q, k, v, o = (t[name[:-1] + x] for x in "qkvo")
            for h in range(q.shape[0]):
                per_key += int(np.sum(q[h].any(axis=0) & k[h].any(axis=0)))
                per_key += int(np.sum(v[h].any(axis=0) & o[h].any(axis=1)))
    positions = length + 1
    return per_position * positions + per_key * positions * (positions + 1) // 2


def test_every_method_right_and_timed(parity):
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    result, report = bench(parity)
    assert result.returncode == 0, result.stderr
    assert report["peak"]["gflops"] > 0 and report["threads"] == 1
    assert report["all_right"] is True and report["skipped_frameworks"] == {}
    [network] = report["networks"]
    assert (network["words"], network["length"]) == (2, 12)
    assert [m["method"] for m in network["methods"]] == METHODS
    for m in network["methods"]:
        assert m["right"] is True and m["first_wrong"] is None, m
        assert m["seconds_per_word"] > 0 and m["wall_seconds_per_word"] > 0, m
        assert m["ratio_to_krc"] > 0 and m["samples"] == 2 * 2, m  # words x rounds
    assert network["methods"][0]["ratio_to_krc"] == 1
    assert network["useful_multiply_adds_per_word"] == multiply_adds_from_the_file(parity, 12)
    assert network["krc_useful_gflops"] == pytest.approx(
        2e-9 * network["useful_multiply_adds_per_word"] / network["methods"][0]["seconds_per_word"])


def test_a_corrupted_network_is_reported_wrong_and_untimed(parity, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    from safetensors import safe_open
    from safetensors.numpy import save_file

    with safe_open(parity, "np") as f:
        metadata = f.metadata()
        tensors = {name: f.get_tensor(name) for name in f.keys()}
    assert tensors["unembed"].shape[1] == 2  # parity's two states, even and odd
    tensors["unembed"] = tensors["unembed"][:, ::-1].copy()
    corrupted = str(tmp_path / "parity_swapped.safetensors")
    save_file(tensors, corrupted, metadata=metadata)
    result, report = bench(corrupted)
    assert result.returncode == 1, result.stderr
    assert report["all_right"] is False
    [network] = report["networks"]
    assert [m["method"] for m in network["methods"]] == METHODS
    for m in network["methods"]:
        assert m["right"] is False and m["first_wrong"] == {"word": 0, "position": 0}, m
        assert m["seconds_per_word"] is None and m["ratio_to_krc"] is None, m
    assert network["krc_useful_gflops"] is None


def test_missing_frameworks_are_named_and_krc_still_runs(parity, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    for name in ("torch", "onnxruntime"):
        (blocked / (name + ".py")).write_text("raise ImportError('blocked by the test')\n")
    env = dict(os.environ, PYTHONPATH=str(blocked))
    result, report = bench(parity, env)
    assert result.returncode == 0, result.stderr
    assert set(report["skipped_frameworks"]) == {"torch", "onnxruntime"}
    assert "blocked by the test" in report["skipped_frameworks"]["torch"]
    [network] = report["networks"]
    krc, *others = network["methods"]
    assert krc["method"] == "krc" and krc["right"] is True and krc["seconds_per_word"] > 0
    for m in others:
        assert m["right"] is None and m["seconds_per_word"] is None, m
        assert ("torch" if m["method"].startswith("torch") else "onnx") in m["skipped"], m
    assert report["peak"]["by"] == "numpy.matmul" and report["peak"]["gflops"] > 0


def test_bad_input_exits_2_naming_the_file(tmp_path):
    missing = str(tmp_path / "no_such.safetensors")
    result, report = bench(missing)
    assert result.returncode == 2 and report is None
    assert "no_such.safetensors" in result.stderr
