"""Shared by tests/python/test_frameworks*.py: the krc command, zoo networks compiled into a
temporary directory, the automaton oracle read from a weights file's own metadata through the
official safetensors reader, and random words."""
import contextlib
import json
import os
import random
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ZOO = os.path.join(REPO, "automata", "zoo")
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


class Oracle:
    """An automaton in krc's native JSON (targets by name or by index), run letter by letter:
    a zoo file (Oracle.zoo) or the "automaton" metadata of a weights file (Oracle.of_file)."""

    @staticmethod
    def zoo(name):
        with open(os.path.join(ZOO, name + ".json")) as f:
            return Oracle(json.load(f))

    @staticmethod
    def of_file(weights_path):
        from safetensors import safe_open

        with safe_open(weights_path, framework="np") as f:
            return Oracle(json.loads(f.metadata()["automaton"]))

    def __init__(self, doc):
        self.states, self.letters = list(doc["states"]), list(doc["alphabet"])
        index = {name: i for i, name in enumerate(self.states)}
        target = (lambda t: index[t] if isinstance(t, str) else int(t))
        self.initial = target(doc["initial"])
        self.delta = {a: [target(t) for t in doc["transitions"][a]] for a in self.letters}

    def run(self, word):
        """State names after every prefix, the empty one first."""
        q, out = self.initial, [self.states[self.initial]]
        for a in word:
            q = self.delta[a][q]
            out.append(self.states[q])
        return out

    def words(self, seed, count, longest, short):
        """`count` random words: one of `longest` letters, the others of 0..short letters."""
        rng = random.Random(seed)
        lengths = [longest] + [rng.randint(0, short) for _ in range(count - 1)]
        return [[rng.choice(self.letters) for _ in range(n)] for n in lengths]


def krc_run(path, word, *options):
    """`krc run --json` on one word: {"states", "margins", ...}."""
    return json.loads(krc("run", path, "--json", *options, ",".join(word)).stdout)
