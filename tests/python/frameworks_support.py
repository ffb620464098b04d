"""Shared by tests/python/test_frameworks*.py: the krc command, zoo networks compiled into a
temporary directory, the automaton oracle read from a weights file's own metadata through the
official safetensors reader (oracle.py), and random words."""
import contextlib
import json
import os
import subprocess
import sys

from oracle import Oracle, REPO, ZOO  # noqa: F401  (the tests import them from here too)

if not os.path.isdir(os.path.join(REPO, "tools", "python", "krc")):
    raise RuntimeError("tools/python/krc not found beside the tests")
try:
    import krc.torch_module  # noqa: F401  (the installed package, or the source tree's)
except ImportError:  # an installed krc without these modules: the source tree's instead
    for name in [m for m in sys.modules if m == "krc" or m.startswith("krc.")]:
        del sys.modules[name]
    sys.path.insert(0, os.path.join(REPO, "tools", "python"))


@contextlib.contextmanager
def one_thread():
    """torch on one intra-op thread for the block: the networks are small, and on a shared
    machine OpenMP's spinning threads cost ten times the work (measured: 13 s of CPU against 1 s
    for one zoo network's forward passes at a load of 20)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def onnx_session(path):
    """An onnxruntime session on the CPU, one thread (as one_thread says)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def krc_binary():
    """$KRC_BINARY, else build/krc of the repository; None when neither exists."""
    path = os.environ.get("KRC_BINARY") or os.path.join(REPO, "build", "krc")
    return path if os.access(path, os.X_OK) else None


def krc(*args, check=True):
    """Runs the krc command; its CompletedProcess (text). check: a failure raises, with stderr."""
    result = subprocess.run([krc_binary(), *map(str, args)], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError("krc %s: status %d: %s" % (" ".join(map(str, args)),
                                                      result.returncode, result.stderr))
    return result


def compile_zoo(directory, name, strategy, max_len, *options):
    path = os.path.join(str(directory), "%s_%s_%d.safetensors" % (name, strategy, max_len))
    krc("compile", os.path.join(ZOO, name + ".json"), "--strategy", strategy, "--max-len",
        max_len, "-o", path, *options)
    return path


def zoo_names():
    return sorted(f[:-5] for f in os.listdir(ZOO) if f.endswith(".json"))


def krc_run(path, word, *options):
    """`krc run --json` on one word: {"states", "margins", ...}."""
    return json.loads(krc("run", path, "--json", *options, ",".join(word)).stdout)
